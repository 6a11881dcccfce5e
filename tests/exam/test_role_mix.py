"""Simulated and real endpoints in one exam are refused in one line, before a run folder exists, unless
asked for (`--allow-simulated-roles`, setting `allow_simulated_roles`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from examiner.api.exam import ExamOptions, prepare_exam
from examiner.core.config import EndpointSpec, Settings
from examiner.core.errors import UserError
from examiner.exam.role_mix import check_role_mix
from tests.helpers.cli_runs import assert_one_error, run_cli
from tests.helpers.simulated_exam import sim_settings

CORPUS = "corpora/examiner-handbook/01-exam.md"
REAL = EndpointSpec(provider="openai", model="real-model", base_url="http://127.0.0.1:9/v1")


def mixed(**roles: str) -> Settings:
    """The simulated exam with a real endpoint `real` given to `roles`."""
    settings = sim_settings()
    return settings.merged({"endpoints": {"real": REAL.model_dump()}, "roles": roles})


@pytest.mark.parametrize(("roles", "targets", "judges", "words"), [
    ({"candidate": "real"}, (), (), ("examiner sim", "judge sim", "target real")),
    ({}, ("real",), (), ("target real",)),
    ({"examiner": "real", "candidate": "real"}, (), (), ("judge sim", "examiner real", "target real")),
    ({"examiner": "real", "judge": "real"}, (), (), ("target sim",)),
    ({"examiner": "real", "candidate": "real"}, (), ("real", "sim"), ("judge sim",)),
])
def test_a_mix_is_refused(roles: dict[str, str], targets: tuple[str, ...], judges: tuple[str, ...],
                          words: tuple[str, ...]) -> None:
    settings = mixed(**roles)
    with pytest.raises(UserError, match="simulated and real endpoints in one exam") as caught:
        check_role_mix(settings, targets, judges)
    message = str(caught.value)
    assert "\n" not in message and "--allow-simulated-roles" in message
    for word in words:
        assert word in message, (word, message)
    check_role_mix(settings.merged({"allow_simulated_roles": True}), targets, judges)


def test_all_simulated_or_all_real_is_accepted() -> None:
    check_role_mix(sim_settings(), (), ())
    check_role_mix(mixed(examiner="real", judge="real", candidate="real"), (), ())
    check_role_mix(mixed(candidate="real").simulated(), (), ())  # --simulate gives every role a twin


def test_the_command_refuses_a_mix_before_the_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(mixed(candidate="real").model_dump(mode="json")), encoding="utf-8")
    for command in ("run", "estimate"):
        out = tmp_path / command
        code, lines, _ = run_cli([command, CORPUS, "--config", str(config), "--out", str(out), "--quiet"],
                                 capsys, caplog)
        assert_one_error(code, lines, "simulated and real endpoints", "--allow-simulated-roles")
        assert not out.exists()


def test_the_flag_allows_a_mix_and_the_run_records_it() -> None:
    options = ExamOptions(corpus=(CORPUS,), allow_simulated_roles=True)
    _, resolved = prepare_exam(options, mixed(candidate="real"))
    assert resolved.allow_simulated_roles  # written to the run's config.yaml, so a resume keeps it
    with pytest.raises(UserError, match="simulated and real"):
        prepare_exam(ExamOptions(corpus=(CORPUS,)), mixed(candidate="real"))
