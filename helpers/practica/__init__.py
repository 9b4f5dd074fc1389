"""La práctica con TRL (módulo 11_practica): datos, referencias y ejecuciones.

El estudiante escribe en el cuaderno cada objeto de TRL; este paquete solo
pone los datos, el modelo y lo que el cuaderno necesita para comprobarlo:

- ``prompts``: enunciados de 4, 5 y 6 tokens con plantilla de chat
  (``practice_problems``, ``chat_dataset``), el lote rellenado a la izquierda
  con la disposición de TRL (``left_padded_batch``), la referencia de
  ``response_log_probs`` y la verdad sin relleno (``unpadded_log_probs``), la
  tabla de las tres pasadas (``padding_table``), lo que calcula GRPOTrainer de
  TRL 1.16 sin ``position_ids`` (``trl_log_prob_gap``) y un modelo rotatorio
  diminuto (``tiny_rotary_model``).
- ``rewards``: ``correctness_reward`` y ``format_reward`` con el contrato de
  TRL; una referencia ilegible paga 0 y se avisa (``UnparsableGoldWarning`` y
  la métrica ``unparsable_gold``).
- ``runs``: las ejecuciones de GRPOTrainer que el estudiante diagnostica por
  sus registros, con nombres neutros (una sana y siete rotas, cada rota con su
  gemela arreglada): ``FAILURES``, ``load_runs``, ``healthy_run_id``,
  ``plot_run``, ``plot_runs``; ``python -m helpers.practica.runs --write``.
- ``dpo``: los pares del módulo 10 para DPOTrainer (``preference_dataset``),
  su pérdida y sus gradientes frente a la ``dpo_loss`` del estudiante
  (``compare_with_own_loss``) y un entrenamiento corto junto al DPO del curso
  (``train_side_by_side``).
- ``guards``: errores claros, en español, ante una entrada mala (columnas que
  leen las recompensas, lotes que ``num_generations`` no divide, bf16 en una
  CPU sin él, tokenizador sin plantilla, carpeta del modelo).
- ``launch``: el guion del estudiante tal cual, sacado de su cuaderno, con
  ``torchrun`` o en una GPU (``python -m helpers.practica.launch``).
- ``gpu_check``: ``make gpu-check``, unos pasos en una GPU de verdad (sin GPU,
  se salta y lo dice).

Cada submódulo se importa cuando se pide (``from helpers.practica import
prompts``): importar el paquete no importa transformers.
"""
