"""La práctica con TRL (módulo 11_practica): datos, referencias y ejecuciones.

El estudiante escribe en el cuaderno cada objeto de TRL; este paquete solo
pone los datos, el modelo y lo que el cuaderno necesita para comprobarlo:

- ``prompts``: enunciados de longitudes distintas, con plantilla de chat y
  relleno a la izquierda, y la referencia de ``response_log_probs``.
- ``rewards``: las funciones de recompensa con el contrato de TRL.
- ``runs``: las ejecuciones rotas (y arregladas) que el estudiante diagnostica
  por sus registros, guardadas con la orden que las rehace.
- ``dpo``: DPOTrainer frente a la ``dpo_loss`` del estudiante.
- ``guards``: errores claros, en español, ante una entrada mala.
- ``launch``: el guion del estudiante tal cual, con ``torchrun`` o en una GPU.

Cada submódulo se importa cuando se pide (``from helpers.practica import
prompts``): importar el paquete no importa transformers.
"""
