"""The registry loads each definition by name (``"module:attr"``), on first access, and no other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from unqover.probes import base, registry

SOURCE = Path(__file__).resolve().parents[2] / "src"
DEFINITION_MODULES = (
    "unqover.probes.unqover",
    "unqover.probes.nli",
    "unqover.probes.eec",
    "unqover.probes.eec_person",
)


def loaded_after(code: str) -> dict:
    """The definition modules in ``sys.modules`` after running ``code`` in a fresh interpreter, with its output."""
    script = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps({{'loaded': [m for m in {list(DEFINITION_MODULES)!r} if m in sys.modules]}}))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_registry_loads_no_definition():
    assert loaded_after("import unqover.probes.registry")["loaded"] == []


def test_asking_for_one_probe_loads_its_module_only():
    loaded = loaded_after("from unqover.probes.registry import get_probe\nget_probe('nli-gender')")["loaded"]
    assert loaded == ["unqover.probes.nli"]


def test_names_and_groups_need_no_definition():
    code = "from unqover.probes.registry import groups, probe_names\nprobe_names(), groups()"
    assert loaded_after(code)["loaded"] == []


def test_the_emotion_person_probe_loads_the_emotion_module_it_extends():
    loaded = loaded_after("from unqover.probes.registry import PROBES\nPROBES['eec-person']")["loaded"]
    assert set(loaded) == {"unqover.probes.eec", "unqover.probes.eec_person"}


@pytest.mark.parametrize("name", list(registry.SPECS))
def test_each_spec_loads_the_definition_of_its_name_and_group(name):
    spec = registry.SPECS[name]
    probe = registry.PROBES[name]
    assert probe is spec.load()  # one object per probe: the identity checks compare definitions
    assert probe.name == name
    assert probe.group == spec.group == registry.PROBES.group_of(name)


def test_probes_is_the_table_the_modules_below_the_registry_see():
    assert registry.PROBES is base.REGISTERED
    assert list(base.REGISTERED) == list(registry.SPECS)
    assert dict(base.REGISTERED.items())["religion"] is registry.get_probe("religion")


def test_a_definition_set_directly_is_listed_and_can_be_taken_out():
    table = base.ProbeTable()
    table.declare({"nli-gender": registry.SPECS["nli-gender"]})
    toy = registry.PROBES["gender"]
    table["toy"] = toy
    assert list(table) == ["nli-gender", "toy"] and table["toy"] is toy and "toy" in table
    del table["toy"]
    assert "toy" not in table and len(table) == 1
    with pytest.raises(KeyError):
        table["toy"]


def test_an_unknown_probe_is_refused_with_the_choices():
    from unqover.errors import UnqoverError

    with pytest.raises(UnqoverError, match="unknown probe 'nope'; choose from gender, nationality"):
        registry.get_probe("nope")
