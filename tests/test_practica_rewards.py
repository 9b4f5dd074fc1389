"""helpers.practica.rewards: las recompensas con el contrato de TRL.

Además de la referencia, cada error típico del ejercicio 2 se escribe aquí y
se comprueba que da otro resultado en alguna entrada: si no, el ejercicio no
podría distinguirlo. La última prueba llama a las dos referencias desde un
``GRPOTrainer`` de verdad, dos pasos.
"""

from __future__ import annotations

import re
import warnings

import pytest
from math_verify import parse

from helpers.practica import prompts
from helpers.practica.rewards import (
    FORMAT_PATTERN,
    UNPARSABLE_METRIC,
    UnparsableGoldWarning,
    completion_text,
    correctness_reward,
    format_reward,
)

COURSE = "17×20+17×4=340+68=408."
TRL_STRIPPED = "17×20+17×4=340+68=408"  # TRL quita el «.» (token de fin)
MULTILINE = "Primero 17×20=340.\nLuego 17×4=68.\nTotal: \\boxed{408}"
GARBAGE = [
    "",
    "   ",
    "\x00",
    "١٢٣",
    "💥" * 100,
    "9" * 20000,
    "=1" * 5000 + ".",
    "\\boxed{" * 200,
    "}" * 200 + "\\boxed{408",
    "\\frac{",
    "\n\n\n",
    "NaN",
    "1e999999",
    None,
    [],
    [{"role": "assistant", "content": None}],
]


def _conversation(text):
    return [{"role": "assistant", "content": text}]


def _trl_kwargs(n):
    """Lo demás que pasa TRL 1.16 (``_calculate_rewards``), y otra columna."""
    return {
        "prompts": [[{"role": "user", "content": "17×24="}]] * n,
        "completion_ids": [[1, 2, 3]] * n,
        "trainer_state": object(),
        "log_extra": lambda *a, **k: None,
        "log_metric": lambda *a, **k: None,
        "difficulty": ["fácil"] * n,
    }


# --- completion_text ---------------------------------------------------------


def test_completion_text_forms():
    assert completion_text(COURSE) == COURSE
    assert completion_text(_conversation(COURSE)) == COURSE
    assert completion_text({"role": "assistant", "content": COURSE}) == COURSE
    parts = {"role": "assistant", "content": [{"type": "text", "text": "=408."}]}
    assert completion_text(parts) == "=408."
    assert completion_text(None) == ""


def test_completion_text_rejects_non_text():
    with pytest.raises(TypeError, match="texto"):
        completion_text(408)


# --- correctness_reward ------------------------------------------------------


def test_correctness_accepts_course_trl_and_boxed_formats():
    completions = [
        COURSE,
        TRL_STRIPPED,
        "La respuesta es \\boxed{408}.",
        MULTILINE,
        "17×20+17×4=340+68=407.",
        "\\boxed{407}",
    ]
    assert correctness_reward(completions, ["408"] * 6) == [1, 1, 1, 1, 0, 0]
    golds = [408, "\\boxed{408}", "#### 408"]
    assert correctness_reward([COURSE] * 3, golds) == [1.0, 1.0, 1.0]


def test_plain_and_conversational_agree():
    texts = [COURSE, TRL_STRIPPED, "=407.", MULTILINE, ""]
    golds = ["408"] * len(texts)
    plain = correctness_reward(texts, golds)
    chat = correctness_reward([_conversation(t) for t in texts], golds)
    assert plain == chat == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert format_reward(texts) == format_reward([_conversation(t) for t in texts])


@pytest.mark.parametrize("reward", [correctness_reward, format_reward])
def test_returns_a_list_of_python_floats(reward):
    texts = [COURSE, "=407.", ""]
    kwargs = {"answer": ["408"] * 3} if reward is correctness_reward else {}
    result = reward(texts, **kwargs)
    assert type(result) is list and len(result) == 3
    assert all(type(x) is float for x in result)


@pytest.mark.parametrize("reward", [correctness_reward, format_reward])
def test_trl_kwargs_are_accepted_and_ignored(reward):
    texts = [COURSE, TRL_STRIPPED, "=407.", MULTILINE]
    kwargs = {"answer": ["408"] * 4} if reward is correctness_reward else {}
    assert reward(texts, **kwargs) == reward(texts, **kwargs, **_trl_kwargs(4))
    # como los llama TRL: todo con nombre
    assert reward(completions=texts, **kwargs, **_trl_kwargs(4)) == reward(
        texts, **kwargs
    )


def test_correctness_reads_the_answer_column():
    texts = [COURSE, COURSE]
    assert correctness_reward(texts, ["408", "407"]) == [1.0, 0.0]
    assert correctness_reward(texts, ["407", "408"]) == [0.0, 1.0]


def test_correctness_without_answer_column_is_a_clear_error():
    with pytest.raises(ValueError, match="columna «answer»"):
        correctness_reward([COURSE], prompts=["17×24="])
    with pytest.raises(ValueError, match="una referencia por respuesta"):
        correctness_reward([COURSE, COURSE], ["408"])


@pytest.mark.parametrize("gold", ["", "n/a", "####", "   ", None, "\\boxed{}"])
def test_unparsable_gold_never_pays_and_is_reported(gold):
    completions = ["", COURSE, "n/a", "####", "\\boxed{}"]
    logged = []
    with pytest.warns(UnparsableGoldWarning, match="no se pueden leer"):
        rewards = correctness_reward(
            completions,
            [gold] * len(completions),
            log_metric=lambda name, value: logged.append((name, value)),
        )
    assert rewards == [0.0] * len(completions)
    assert logged == [(UNPARSABLE_METRIC, 1.0)]


def test_readable_gold_is_not_reported():
    logged = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnparsableGoldWarning)
        correctness_reward(
            [COURSE, ""], ["408", "408"], log_metric=lambda *a: logged.append(a)
        )
    assert logged == [(UNPARSABLE_METRIC, 0.0)]


def test_garbage_never_raises():
    golds = ["408"] * len(GARBAGE)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnparsableGoldWarning)
        assert correctness_reward(GARBAGE, golds) == [0.0] * len(GARBAGE)
    assert all(type(x) is float for x in format_reward(GARBAGE))


# --- format_reward -----------------------------------------------------------


def test_format_reward_cases():
    good = [
        COURSE,
        TRL_STRIPPED,
        "=56.",
        MULTILINE,
        "Pienso:\n17×24=408.",
        "\\boxed{\\frac{816}{2}}",
        "\\boxed{408} .\n",
    ]
    bad = [
        "",
        "17×20+17×4=340+6",  # cortada a media cuenta
        "=408.\nY además 7",  # sigue escribiendo después
        "408",
        "la respuesta es 408",
        "\\boxed{408",
        "=4O8",
    ]
    assert format_reward(good) == [1.0] * len(good)
    assert format_reward(bad) == [0.0] * len(bad)


# --- los errores típicos dan otro resultado ----------------------------------


def _wrong_pays_unparsable_gold(completions, answer, **kwargs):
    """Compara lo extraído de los dos lados: ``[] == []`` paga 1."""
    return [
        float(parse(str(g)) == parse(completion_text(c)))
        for c, g in zip(completions, answer, strict=True)
    ]


def _wrong_substring(completions, answer, **kwargs):
    """«¿Está la respuesta en el texto?»: «8» está en «68+340=408.»."""
    return [
        float(str(g) in completion_text(c))
        for c, g in zip(completions, answer, strict=True)
    ]


_NO_DOTALL = re.compile(FORMAT_PATTERN.pattern)  # el mismo patrón sin DOTALL


def _wrong_format_without_dotall(completions, **kwargs):
    return [
        float(_NO_DOTALL.fullmatch(completion_text(c)) is not None) for c in completions
    ]


def _wrong_without_kwargs(completions, answer):
    return correctness_reward(completions, answer)


def test_mistake_paying_unparsable_gold():
    completions, golds = ["", "####"], ["", "####"]
    assert _wrong_pays_unparsable_gold(completions, golds) == [1.0, 1.0]
    with pytest.warns(UnparsableGoldWarning):
        assert correctness_reward(completions, golds) == [0.0, 0.0]


def test_mistake_substring_match_is_hackable():
    hack = ["68+340=408."]
    assert _wrong_substring(hack, ["8"]) == [1.0]
    assert correctness_reward(hack, ["8"]) == [0.0]


def test_mistake_regex_without_dotall():
    assert FORMAT_PATTERN.flags & re.DOTALL
    multiline = [MULTILINE, "Pienso:\n17×24=408."]
    assert _wrong_format_without_dotall(multiline) == [0.0, 0.0]
    assert format_reward(multiline) == [1.0, 1.0]
    # en una línea no se nota: por eso el ejercicio usa respuestas de varias
    assert _wrong_format_without_dotall([COURSE]) == format_reward([COURSE])


def test_mistake_ignoring_kwargs_breaks_under_trl():
    with pytest.raises(TypeError):
        _wrong_without_kwargs([COURSE], answer=["408"], **_trl_kwargs(1))
    assert correctness_reward([COURSE], answer=["408"], **_trl_kwargs(1)) == [1.0]


# --- dentro de TRL -----------------------------------------------------------


def test_both_rewards_inside_a_real_grpo_trainer(tmp_path):
    """Dos pasos de ``GRPOTrainer`` con las dos referencias como recompensas.

    Dos enunciados por paso (los dos del conjunto de datos), uno con la
    referencia ilegible: TRL llama a las funciones con su contrato, registra
    sus medias, el aviso sale y la métrica ``unparsable_gold`` vale 1/2.
    """
    trl = pytest.importorskip("trl")
    from helpers.puente.convert import load_pretrained_gpt2
    from helpers.puente.tokenizer import make_tokenizer

    dataset = prompts.chat_dataset([(17, 24), (43, 21)])
    dataset = dataset.map(
        lambda row, i: {"answer": ["408", "n/a"][i]}, with_indices=True
    )
    tokenizer = make_tokenizer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        args = trl.GRPOConfig(
            output_dir=str(tmp_path),
            use_cpu=True,
            bf16=False,
            seed=0,
            max_steps=2,
            per_device_train_batch_size=8,
            num_generations=4,
            max_completion_length=26,
            generation_kwargs={"suppress_tokens": [tokenizer.pad_token_id]},
            learning_rate=1e-5,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            disable_tqdm=True,
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = trl.GRPOTrainer(
            model=load_pretrained_gpt2(),
            reward_funcs=[correctness_reward, format_reward],
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
        )
        trainer.train()
    steps = [h for h in trainer.state.log_history if "reward" in h]
    assert len(steps) == 2
    for logs in steps:
        assert 0.0 <= logs["rewards/correctness_reward/mean"] <= 0.5
        assert logs[UNPARSABLE_METRIC] == pytest.approx(0.5)
    # el modelo del SFT escribe el formato del curso en dos cifras por dos
    assert max(h["rewards/format_reward/mean"] for h in steps) > 0.5
    assert any(issubclass(w.category, UnparsableGoldWarning) for w in caught)
