"""The offline API server of crd_schema.py: quantities as resource.ParseQuantity parses them (compared
with apimachinery's own code), the CEL quantity functions, and the schema keywords it checks."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest
from crd_schema import ROOT, _cel_holds, parse_quantity, violations


@pytest.mark.parametrize(
    "text, value",
    [
        ("100m", "0.1"),
        ("1.5Gi", "1610612736"),
        ("1e3", "1000"),
        ("2Ki", "2048"),
        ("0", "0"),
        ("-0", "0"),
        ("+.5", "0.5"),
        ("1.", "1"),
        ("1.G", "1e9"),
        (".", "0"),
        ("1E", "1e18"),
        ("1E+3", "1000"),
        ("5e-3", "0.005"),
        ("0.1n", "1e-9"),  # rounded up to a whole nano
        ("-0.1n", "-1e-9"),
        ("9Ei", "9223372036854775807"),  # a binary quantity is capped at the int64 maximum
        ("123456789012345678901234567890", "123456789012345678901234567890"),  # exact past float precision
    ],
)
def test_a_quantity_has_the_value_the_api_server_gives_it(text, value):
    assert parse_quantity(text) == Decimal(value)


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        "Infinity",
        "-Inf",
        "1_000",
        " 1",
        "1 ",
        "1\u00a0",
        "",
        "1e",
        "1e-",
        "1Ki3",
        "1kK",
        "1ee3",
        "1e3e3",
        ".e-10",
        "0.1mi",
        "1i",
        "1.1.M",
        "0x10",
        "\u0661",
    ],
)
def test_what_the_api_server_refuses_is_no_quantity(text):
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_cel_sees_quantities_exactly():
    string = {"type": "string"}
    assert not _cel_holds("isQuantity(self)", string, "NaN")
    assert not _cel_holds("isQuantity(self)", string, "1_000")
    assert _cel_holds("isQuantity(self)", string, "100m")
    assert _cel_holds("quantity(self).compareTo(quantity('1073741824')) == 0", string, "1Gi")
    # one apart at 10^18: equal as floats, not as quantities
    assert _cel_holds("quantity(self).compareTo(quantity('1000000000000000000')) > 0", string, "1000000000000000001")


def test_the_keywords_a_crd_schema_may_use_are_checked():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 3},
            "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1},
            "size": {"x-kubernetes-int-or-string": True},
            "labels": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}},
            "empty": {"type": "object"},
        },
    }
    assert violations(schema, {"name": "ab", "ratio": 1, "size": "1Gi", "labels": {"a": "b"}}) == []
    assert violations(schema, {"name": "a", "ratio": 0, "size": True, "labels": {}, "empty": {"x": 1}}) == [
        ".name: should be at least 2 chars long",
        ".ratio: should be greater than 0",
        ".size: must be int or string",
        ".labels: should have at least 1 properties",
        '.empty: unknown field "x"',
    ]


# ---- compared with the API server's own parser ------------------------------------------------

HARNESS = """package main

import (
\t"bufio"
\t"encoding/json"
\t"fmt"
\t"os"

\t"k8s.io/apimachinery/pkg/api/resource"
)

// one JSON string a line in; "err" or the exact value (unscaled digits and scale) a line out
func main() {
\tin := bufio.NewScanner(os.Stdin)
\tfor in.Scan() {
\t\tvar s string
\t\tif err := json.Unmarshal(in.Bytes(), &s); err != nil {
\t\t\tpanic(err)
\t\t}
\t\tif q, err := resource.ParseQuantity(s); err != nil {
\t\t\tfmt.Println("err")
\t\t} else {
\t\t\tfmt.Println(q.AsDec().UnscaledBig().String(), int64(q.AsDec().Scale()))
\t\t}
\t}
}
"""


def _corpus(n: int) -> list[str]:
    """Strings near the grammar's edges: random characters of a quantity's alphabet, and shaped
    quantities (sign, up to 22 digits, a fraction, any suffix or exponent)."""
    rnd = random.Random(19)
    alphabet = "0123456789" * 3 + ".+-eEinumkKMGTPi _xN"
    out = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12))) for _ in range(n)]
    suffixes = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    for _ in range(n):
        text = rnd.choice(["", "-", "+"]) + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(0, 22)))
        if rnd.random() < 0.5:
            text += "." + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(0, 12)))
        exponent = rnd.choice(["e", "E", "e+", "e-"]) + str(rnd.randint(0, 40))
        out.append(text + rnd.choice([*suffixes, exponent]))
    return out


def test_quantities_are_parsed_as_apimachinery_parses_them(tmp_path):
    """apimachinery's resource.ParseQuantity, the version of the local cluster's Kubernetes, compiled
    here with Go (the module from the Go module proxy, cached like hack/local-k8s.sh's build)."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).exists():
        pytest.skip("no Go toolchain (hack/local-k8s.sh installs it)")
    k8s = re.search(r"K8S_VERSION:-v1\.(\d+\.\d+)", (ROOT / "hack" / "local-k8s.sh").read_text()).group(1)
    (tmp_path / "go.mod").write_text(f"module quantity\n\ngo 1.23\n\nrequire k8s.io/apimachinery v0.{k8s}\n")
    (tmp_path / "main.go").write_text(HARNESS)
    cache = Path(os.environ.get("TPCC_CACHE", Path.home() / ".cache" / "tpcc-operator")) / "go"
    env = {**os.environ, "GOMODCACHE": str(cache / "mod"), "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    built = subprocess.run(
        [go, "build", "-o", "parse", "."], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert built.returncode == 0, built.stderr
    cases = [
        "NaN",
        "Infinity",
        "1_000",
        " 1",
        "1 ",
        "100m",
        "1.5Gi",
        "1e3",
        "2Ki",
        "",
        "0",
        "+",
        "-",
        ".",
        "-.",
        "9223372036854775807",
        "9223372036854775808",
        "8Ei",
        "-8Ei",
        "7.99999Ei",
        "0.1n",
        "12345678901234567890.5e-30",
        ".Gi",
        "-.5Ki",
        "99999999999999999Ki",
        *_corpus(10000),
    ]
    out = subprocess.run(
        [str(tmp_path / "parse")],
        input="".join(json.dumps(c) + "\n" for c in cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.splitlines()
    assert len(out) == len(cases)
    differ, accepted = [], 0
    for text, line in zip(cases, out):
        want = None if line == "err" else Decimal(f"{line.split()[0]}E{-int(line.split()[1])}")
        try:
            mine = parse_quantity(text)
        except ValueError:
            mine = None
        accepted += want is not None
        if mine != want:
            differ.append((text, line, mine))
    assert differ == []
    assert 0.4 < accepted / len(cases) < 0.8  # both kinds well represented
