"""Planning a sweep: jobs, verifiers, chaos per case — everything decided before a run starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskcrew.eval.models import ChaosSetting, load_cases
from taskcrew.eval.sweep import SweepError, SweepSettings, chaos_config, plan_jobs, plan_sweep, verifier_for
from taskcrew.mock_erp import ChaosConfig


def test_jobs_run_model_by_model_case_by_case_repeat_by_repeat() -> None:
    settings = SweepSettings(
        models=["scripted/solver", "scripted/sloppy"], case_pattern="research-s*", repeats=2
    )
    plan = plan_sweep(settings)
    assert [c.id for c in plan.cases] == ["research-sum-of-squares", "research-soylent-postponed"]
    assert [(j.index, j.model.split("/")[1], j.case_id.split("-")[1], j.repeat) for j in plan.jobs] == [
        (0, "solver", "sum", 1),
        (1, "solver", "sum", 2),
        (2, "solver", "soylent", 1),
        (3, "solver", "soylent", 2),
        (4, "sloppy", "sum", 1),
        (5, "sloppy", "sum", 2),
        (6, "sloppy", "soylent", 1),
        (7, "sloppy", "soylent", 2),
    ]
    assert {j.verifier_model for j in plan.jobs} == {"scripted/auditor"}


def test_the_verifier_comes_from_the_flag_the_environment_or_the_auditor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert verifier_for("scripted/solver", None) == "scripted/auditor"
    assert verifier_for("openai/gpt-4o", "anthropic/claude-sonnet-4-5") == "anthropic/claude-sonnet-4-5"
    with pytest.raises(SweepError, match="no verifier model for openai/gpt-4o"):
        verifier_for("openai/gpt-4o", None)
    monkeypatch.setenv("TASKCREW_VERIFIER_MODEL", "anthropic/claude-opus-4-1")
    assert verifier_for("openai/gpt-4o", None) == "anthropic/claude-opus-4-1"
    assert verifier_for("scripted/solver", None) == "anthropic/claude-opus-4-1"  # the environment wins
    with pytest.raises(SweepError, match="different model"):
        verifier_for("anthropic/claude-opus-4-1", None)


def test_each_case_gets_its_own_chaos_unless_the_sweep_turns_it_off() -> None:
    assert chaos_config(ChaosSetting()) == ChaosConfig()  # the ERP's default faults
    assert chaos_config(ChaosSetting(enabled=False)) == ChaosConfig.off()
    assert chaos_config(ChaosSetting(), enabled=False) == ChaosConfig.off()
    custom = chaos_config(
        ChaosSetting(seed=3, save_faults=["service_unavailable"], modal=True, error_rate=0.1)
    )
    assert (custom.seed, custom.save_faults, custom.modal, custom.error_rate) == (
        3,
        ["service_unavailable"],
        True,
        0.1,
    )
    headline = next(c for c in load_cases() if c.id == "northwind-headline")
    assert chaos_config(headline.chaos).save_faults == ["expire_session", "service_unavailable"]


def test_no_case_no_sandbox_no_sweep(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="no case matches 'zzz' in cases/; `taskcrew eval --list` lists"):
        plan_sweep(SweepSettings(models=["scripted/solver"], case_pattern="zzz"))
    with pytest.raises(SweepError, match="sandbox folder"):
        plan_sweep(SweepSettings(models=["scripted/solver"], sandbox=tmp_path / "missing"))
    with pytest.raises(SweepError, match="unknown scripted model"):
        plan_sweep(SweepSettings(models=["scripted/oracle"]))
    assert len(plan_jobs(SweepSettings(models=["scripted/solver"]), load_cases())) == len(load_cases())
