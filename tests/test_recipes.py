"""Recipes: files validated on load, typed parameters, the generated commands and their help, the
company's own recipe folders. No run starts here (see test_recipes_run.py for one end to end)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.models import Plan, PlanStep
from taskcrew.recipes import RecipeFileError, RecipeInputError, load_file, load_library
from taskcrew.recipes.models import RESERVED_PARAMS, Recipe
from taskcrew.recipes.params import ParamValueError, check_value

DEMO = DEFAULT_SANDBOX / "recipes"
DEMO_NAMES = {"enter-invoice", "unpaid-report", "mark-paid", "check-invoice", "vendor-news"}


def recipe_file(folder: Path, recipe_name: str, **fields: object) -> Path:
    data: dict[str, object] = {
        "name": recipe_name,
        "summary": f"Do the {recipe_name} chore.",
        "params": [{"name": "vendor", "type": "vendor", "help": "The vendor."}],
        "task": "Do the chore for {vendor}.",
        "changes_data": False,
    }
    data.update(fields)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{recipe_name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture
def cli(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.delenv("TASKCREW_RECIPES", raising=False)
    monkeypatch.delenv("TASKCREW_SANDBOX", raising=False)
    return CliRunner()


def invoke(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    from taskcrew.cli import app

    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


# ------------------------------------------------------------------------------ files and the library
def test_the_demo_company_ships_a_recipe_per_chore_and_all_load_cleanly() -> None:
    library = load_library([DEMO])
    assert library.problems == []
    assert set(library.recipes) == DEMO_NAMES
    kinds = {p.type for r in library.recipes.values() for p in r.params}
    assert kinds == {"vendor", "date", "text", "choice"}  # amount and currency: tested below
    assert {r.name for r in library.recipes.values() if r.changes_data} == {"enter-invoice", "mark-paid"}
    assert all(r.criteria for r in library.recipes.values())


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"task": "Do the chore for {vendr}."}, "undeclared parameters: vendr"),
        ({"task": "Do the chore for somebody."}, "not used in the task text: vendor"),
        (
            {"params": [{"name": "model", "type": "text", "help": "Which one."}], "task": "Use {model}."},
            "run option",
        ),
        (
            {"params": [{"name": "kind", "type": "choice", "help": "Which one."}], "task": "Use {kind}."},
            "two choices",
        ),
        (
            {"params": [{"name": "v", "type": "colour", "help": "Which one."}], "task": "Use {v} now."},
            "params.0.type",
        ),
        ({"changes_data": None}, "changes_data"),
        ({"colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"task": "Do the chore for {vendor!r}."}, "plain {parameter_name}"),
        ({"name": "Enter Invoice"}, "name: String should match pattern"),
        (
            {
                "params": [
                    {"name": "a", "type": "vendor", "help": "One.", "many": True},
                    {"name": "b", "type": "vendor", "help": "Two.", "many": True},
                ],
                "task": "Do {a} and {b}.",
            },
            "at most one parameter can be a list",
        ),
        (
            {
                "params": [{"name": "n", "type": "text", "help": "One.", "phrase": "invoice"}],
                "task": "Do {n} today.",
            },
            "phrase must contain {value}",
        ),
    ],
)
def test_a_bad_recipe_file_is_refused_with_its_path_and_what_is_wrong(
    tmp_path: Path, fields: dict[str, object], message: str
) -> None:
    path = recipe_file(tmp_path, "bad-one", **fields)
    with pytest.raises(RecipeFileError) as err:
        load_file(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_broken_yaml_names_the_line_and_a_list_is_not_a_recipe(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nsummary: [unclosed\n", encoding="utf-8")
    with pytest.raises(RecipeFileError, match=r"not valid YAML at line \d"):
        load_file(broken)
    listed = tmp_path / "listed.yaml"
    listed.write_text("- name: x\n", encoding="utf-8")
    with pytest.raises(RecipeFileError, match="expected a mapping"):
        load_file(listed)


def test_the_library_skips_bad_files_shadowing_and_duplicates_but_keeps_the_rest(tmp_path: Path) -> None:
    first, second = tmp_path / "company", tmp_path / "mine"
    recipe_file(first, "pay-run")
    recipe_file(first, "run")  # would shadow `taskcrew run`
    (first / "broken.yaml").write_text("name: [", encoding="utf-8")
    recipe_file(second, "pay-run", summary="Another pay run.")  # same name, later folder
    recipe_file(second, "vendor-check")
    library = load_library([first, second], reserved={"run", "audit"})
    assert set(library.recipes) == {"pay-run", "vendor-check"}
    assert library.recipes["pay-run"].source == first / "pay-run.yaml"  # the earlier folder wins
    problems = {p.path.name: p.message for p in library.problems}
    assert "would shadow the built-in command `taskcrew run`" in problems["run.yaml"]
    assert "not valid YAML" in problems["broken.yaml"]
    assert "already defined by" in problems["pay-run.yaml"]


# ------------------------------------------------------------------------------ typed parameters
@pytest.mark.parametrize(
    ("kind", "raw", "value"),
    [
        ("date", "10 October 2026", "2026-10-10"),
        ("date", "2026-10-02", "2026-10-02"),
        ("amount", "1.284,50", "1284.50"),
        ("amount", "$3,420.00", "3420.00"),
        ("currency", " eur ", "EUR"),
        ("vendor", "  Northwind   Traders ", "Northwind Traders"),
        ("text", "HCS-2026-09", "HCS-2026-09"),
    ],
)
def test_values_are_checked_and_normalised(kind: str, raw: str, value: str) -> None:
    assert check_value(kind, raw) == value  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "raw", "message"),
    [
        ("date", "31 Febuary", "is not a date: write it as 2026-10-10"),
        ("amount", "lots", "is not an amount"),
        ("amount", "-5.00", "not a positive amount"),
        ("currency", "Euro", "not a currency code: use three letters"),
        ("vendor", "1234", "not a vendor name"),
        ("text", "   ", "is empty"),
        ("text", "x" * 400, "at most 300"),
        ("text", "a\x00b", "control characters"),
    ],
)
def test_bad_values_say_what_to_pass(kind: str, raw: str, message: str) -> None:
    with pytest.raises(ParamValueError, match=message):
        check_value(kind, raw)  # type: ignore[arg-type]


def test_choices_match_case_insensitively_and_currencies_can_be_limited() -> None:
    assert check_value("choice", "VENDOR", ["currency", "vendor"]) == "vendor"
    with pytest.raises(ParamValueError, match="not one of: currency, vendor"):
        check_value("choice", "month", ["currency", "vendor"])
    with pytest.raises(ParamValueError, match="not one of USD, EUR"):
        check_value("currency", "GBP", ["USD", "EUR"])


def test_expansion_fans_out_over_the_list_parameter_and_fills_optional_ones() -> None:
    library = load_library([DEMO])
    check = library.recipes["check-invoice"]
    runs = check.expand({"vendor": ["Globex Corp", "Initech", "Globex Corp"]})
    assert [r.values["vendor"] for r in runs] == ["Globex Corp", "Initech"]  # a repeat runs once
    assert runs[0].task.startswith("Is the newest invoice from Globex Corp already entered")
    assert all(r.read_only for r in runs) and "Globex Corp" in runs[0].criteria[0]
    one = check.expand({"vendor": "Initech", "invoice": "INI-7781"})
    assert (
        one[0].task.startswith("Is invoice INI-7781 from Initech") and one[0].values["invoice"] == "INI-7781"
    )
    paid = library.recipes["mark-paid"].expand({"invoice": "HCS-2026-09", "paid_on": "2 Oct 2026"})
    assert paid[0].task == "Mark the bill for invoice HCS-2026-09 as paid on 2026-10-02."
    assert not paid[0].read_only


def test_every_bad_value_of_a_request_is_named_in_one_line() -> None:
    recipe = load_library([DEMO]).recipes["mark-paid"]
    with pytest.raises(RecipeInputError) as err:
        recipe.expand({"paid_on": "someday", "vendor": ["A Corp", "B Corp"], "colour": "red"})
    message = str(err.value)
    assert "\n" not in message
    for part in (
        "no parameter colour",
        "--invoice is required",
        "--paid-on: 'someday' is not a date",
        "--vendor takes one value",
    ):
        assert part in message


def test_amount_and_currency_parameters_work_in_a_recipe(tmp_path: Path) -> None:
    path = recipe_file(
        tmp_path,
        "flag-large-bills",
        params=[
            {"name": "above", "type": "amount", "help": "The threshold."},
            {
                "name": "currency",
                "type": "currency",
                "choices": ["usd", "eur"],
                "default": "USD",
                "help": "Which.",
            },
        ],
        task="List the unpaid bills above {above} {currency}.",
    )
    recipe = load_file(path)
    assert recipe.param("currency").choices == ["USD", "EUR"]
    assert recipe.expand({"above": "1.000,00"})[0].task == "List the unpaid bills above 1000.00 USD."
    with pytest.raises(RecipeInputError, match="--currency: GBP is not one of USD, EUR"):
        recipe.expand({"above": "10", "currency": "gbp"})


def test_no_parameter_can_take_a_run_option() -> None:
    from taskcrew.cli import run

    assert set(inspect.signature(run).parameters) <= RESERVED_PARAMS


# ------------------------------------------------------------------------------ plans keep the criteria
def test_a_plan_keeps_the_requests_criteria_first_and_a_read_only_request_changes_nothing() -> None:
    plan = Plan(
        goal="Enter it",
        success_criteria=["The bill is entered", "No other bill changed"],
        steps=[PlanStep(role="browser_operator", title="Enter the bill", instructions="Enter it.")],
        changes_data=True,
    )
    kept = plan.keeping(["No other bill changed", "The answer names the bill"], read_only=True)
    assert kept.success_criteria == [
        "No other bill changed",
        "The answer names the bill",
        "The bill is entered",
    ]
    assert kept.changes_data is False
    assert plan.keeping([]) is plan
    many = plan.keeping([f"Given criterion {i}" for i in range(6)])
    assert Plan.model_validate(many.model_dump()) == many  # a checkpointed plan restores


def test_run_refuses_more_criteria_than_a_plan_can_keep(cli: CliRunner) -> None:
    args = [arg for i in range(7) for arg in ("--criterion", f"Criterion {i}")]
    code, out, err = invoke(cli, "run", "Tell me the open bills.", *args)
    assert code == 2 and "at most 6 success criteria" in out + err


# ------------------------------------------------------------------------------ the commands
def test_help_lists_the_recipes_without_importing_crewai(isolated_home: Path) -> None:
    code = (
        "import sys; from typer.testing import CliRunner; from taskcrew.cli import app; "
        "r = CliRunner().invoke(app, ['--help']); print(r.stdout); "
        "print('CREWAI' if 'crewai' in sys.modules else 'NO-CREWAI')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "NO-CREWAI" in out.stdout
    assert "Recipes" in out.stdout and all(name in out.stdout for name in DEMO_NAMES)


def test_a_recipe_command_has_its_parameters_and_every_run_option(cli: CliRunner) -> None:
    code, out, _ = invoke(cli, "enter-invoice", "--help")
    assert code == 0
    for option in (
        "--vendor",
        "--submit",
        "--dry-run",
        "--model",
        "--verifier-model",
        "--auto-approve",
        "--no-chaos",
        "--max-steps",
        "--erp-url",
        "--sandbox",
        "--criterion",
        "--read-only",
    ):
        assert option in out, option
    assert "Enter a vendor's newest invoice" in out and "VENDOR" in out
    code, out, _ = invoke(cli, "unpaid-report", "--help")
    assert "currency|vendor" in out and "DATE" in out


def test_a_bad_parameter_is_a_one_line_error_before_anything_starts(
    cli: CliRunner, isolated_home: Path
) -> None:
    code, out, err = invoke(cli, "unpaid-report", "--due-before", "31 Febuary")
    assert code == 2 and out == ""
    first, hint = err.strip().splitlines()
    assert first.startswith("error: unpaid-report: --due-before: '31 Febuary' is not a date")
    assert hint.startswith("hint: `taskcrew unpaid-report --help`")
    code, _, err = invoke(cli, "mark-paid", "--paid-on", "2026-10-02")
    assert code == 2 and "--invoice is required" in err
    assert not (isolated_home / "runs").exists()  # nothing started


def test_dry_run_shows_one_task_per_item_with_its_criteria(cli: CliRunner) -> None:
    code, out, _ = invoke(
        cli,
        "check-invoice",
        "--vendor",
        "Globex Corp",
        "--vendor",
        "Initech",
        "--criterion",
        "Cite the bills list",
        "--dry-run",
    )
    assert code == 0
    assert (
        "[1/2] task: Is the newest invoice from Globex Corp" in out
        and "[2/2] task: Is the newest invoice from Initech" in out
    )
    assert out.count("criterion: Cite the bills list") == 2 and out.count("read-only: yes") == 2


def test_recipes_list_and_show(cli: CliRunner) -> None:
    code, out, _ = invoke(cli, "recipes", "list")
    assert code == 0 and all(name in out for name in DEMO_NAMES) and "[read-only]" in out
    code, out, _ = invoke(cli, "recipes", "show", "mark-paid")
    assert code == 0 and "--paid-on DATE (date; required)" in out and "changes data: yes" in out
    assert "criterion: The bill for invoice {invoice} is paid" in out
    code, _, err = invoke(cli, "recipes", "show", "pay-everything")
    assert code == 2 and "no recipe named 'pay-everything'" in err and "enter-invoice" in err


def test_a_company_folder_added_by_the_user_becomes_commands(cli: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "acme-recipes"
    recipe_file(
        folder,
        "vendor-balance",
        summary="Tell what we owe a vendor [in EUR].",
        task="What do we owe {vendor}?",
    )
    recipe_file(folder, "audit", summary="Shadows a built-in command.")
    (folder / "broken.yaml").write_text("name: [", encoding="utf-8")
    code, out, err = invoke(cli, "recipes", "add", str(folder))
    assert code == 2
    assert "added vendor-balance" in out
    assert "'audit' would shadow a built-in command" in err and "broken.yaml: not valid YAML" in err
    code, out, _ = invoke(cli, "vendor-balance", "--vendor", "Initech", "--dry-run")
    assert code == 0 and "task: What do we owe Initech?" in out
    assert "Tell what we owe a vendor [in EUR]." in invoke(cli, "vendor-balance", "--help")[1]
    code, out, _ = invoke(cli, "--help")
    assert "vendor-balance" in out
    code, out, _ = invoke(cli, "audit", "--help")
    assert "The verifier alone" in out  # the built-in command, not the recipe
    # adding again replaces it (idempotent); a demo recipe's name stays taken
    recipe_file(
        folder, "vendor-balance", summary="Tell what we owe a vendor, per currency.", task="Owed to {vendor}?"
    )
    code, out, _ = invoke(cli, "recipes", "add", str(folder / "vendor-balance.yaml"))
    assert code == 0 and "replaced vendor-balance" in out
    assert "Owed to Initech?" in invoke(cli, "vendor-balance", "--vendor", "Initech", "--dry-run")[1]
    recipe_file(tmp_path / "other", "mark-paid")
    code, _, err = invoke(cli, "recipes", "add", str(tmp_path / "other"))
    assert code == 2 and "'mark-paid' is already defined by" in err


def test_the_company_folder_beside_its_procedures_and_named_folders_are_read(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    company = tmp_path / "company"
    recipe_file(company / "recipes", "close-month", task="Close the month for {vendor}.")
    recipe_file(tmp_path / "team", "chase-vendor", task="Chase {vendor} for a copy of the invoice.")
    monkeypatch.setenv("TASKCREW_SANDBOX", str(company))
    monkeypatch.setenv("TASKCREW_RECIPES", str(tmp_path / "team"))
    code, out, _ = invoke(cli, "recipes", "list")
    assert "close-month" in out and "chase-vendor" in out and "enter-invoice" not in out  # another company
    monkeypatch.setenv("TASKCREW_RECIPES", f"{tmp_path / 'team'}:{tmp_path / 'tem'}")
    code, out, err = invoke(cli, "recipes", "list")
    assert code == 0 and "chase-vendor" in out and "tem: no such folder (named in TASKCREW_RECIPES)" in err
    code, out, _ = invoke(cli, "chase-vendor", "--vendor", "Stark Logistics", "--dry-run")
    assert code == 0 and "Chase Stark Logistics for a copy" in out


def test_a_recipe_model_round_trips_through_yaml(tmp_path: Path) -> None:
    recipe = load_library([DEMO]).recipes["vendor-news"]
    again = Recipe.model_validate(yaml.safe_load(yaml.safe_dump(recipe.model_dump(mode="json"))))
    assert again.model_dump() == recipe.model_dump()


def test_the_shell_completes_recipe_names_and_choices(cli: CliRunner) -> None:
    from taskcrew.cli import app

    def complete(words: str) -> list[str]:
        env = {
            "_TASKCREW_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split(" ")) - 1),
        }
        result = cli.invoke(app, [], env=env, prog_name="taskcrew")
        return result.stdout.split()

    assert complete("taskcrew che") == ["check-invoice"]
    assert complete("taskcrew unpaid-report --per ") == ["currency", "vendor"]


def test_a_run_that_cannot_start_stops_the_fan_out_with_runs_own_error(
    cli: CliRunner, isolated_home: Path
) -> None:
    code, out, err = invoke(cli, "enter-invoice", "--vendor", "Initech", "--vendor", "Globex Corp")
    assert code == 2
    assert "run 1 of 2" in out and "run 2 of 2" not in out  # a setup problem applies to every item
    assert "TASKCREW_MODEL" in out + err  # `taskcrew run`'s own message: no model configured
    assert not (isolated_home / "runs").exists()
