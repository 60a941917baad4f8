#!/usr/bin/python3
"""Runs each family's modelled keys at other values than the catalogue's and
checks that they change the outputs as transformers' math says.

docs/config-keys.md gives, per family, a line "Reference runs (...) on the
catalogue's `NAME`: `key` `value`; ..." (a run may add "with `{...}`", other
keys set with it). For each family named on the command line this dumps
NAME, then for every key of that line writes the dump's config.json with the
key set (a `[]` in a key is the first element of a list), runs it with `seam run --hf-config` and --dump, checks the dump
with the family's reference (check.py) and checks that its outputs differ
from NAME's (the config's model_type is the family's, which for
deepseek_v3 is not the catalogue model's). Each key must be a modelled row of the family's table.

Usage: keys.py SEAM WORKDIR MODEL_TYPE...
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)

import check  # noqa: E402
from common import read_safetensors  # noqa: E402

DOC = os.path.join(here, "..", "..", "docs", "config-keys.md")


def sections():
    """model_type -> (the section's text, its modelled keys)."""
    out = {}
    text = open(DOC).read()
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        heading, _, body = part.partition("\n")
        modelled = set(re.findall(r"^\| `([^`]+)` \| modelled \|", body, flags=re.M))
        for model_type in re.findall(r"`([^`]+)`", heading):
            out[model_type] = (body, modelled)
    return out


def runs(body):
    """(catalogue name, [(key, value)]) of a section's reference line."""
    for block in body.split("\n\n"):
        line = " ".join(block.split())
        if line.startswith("Reference runs"):
            name = re.search(r"catalogue's `([^`]+)`:", line).group(1)
            pairs = re.findall(r"`([^`]+)` `([^`]+)`(?: with `([^`]+)`)?", line.split(":", 1)[1])
            return name, [(k, json.loads(v), json.loads(w) if w else {}) for k, v, w in pairs]
    return None, []


def put(cfg, path, value):
    parts = path.split(".")
    at = cfg
    for i, part in enumerate(parts):
        first = part.endswith("[]")
        name = part[:-2] if first else part
        if i == len(parts) - 1 and not first:
            at[name] = value
            return
        at = at[name][0] if first else at[name]


def last_hidden(d):
    return read_safetensors(os.path.join(d, "outputs.safetensors"))["last_hidden_state"]


def seam_run(seam, args, d):
    subprocess.run([seam, "run", *args, "--dump", d], check=True, stdout=subprocess.DEVNULL)


def check_dump(d):
    sys.argv = ["check.py", d, "1e-4"]
    return check.main()


def main():
    seam, work = sys.argv[1], sys.argv[2]
    table = sections()
    failed = 0
    for model_type in sys.argv[3:]:
        body, modelled = table[model_type]
        name, pairs = runs(body)
        if not pairs:
            print(f"{model_type}: docs/config-keys.md has no reference runs")
            return 1
        base = os.path.join(work, model_type, "base")
        shutil.rmtree(os.path.join(work, model_type), ignore_errors=True)
        seam_run(seam, [name], base)
        if check_dump(base) != 0:
            return 1
        cfg = json.load(open(os.path.join(base, "config.json")))
        for key, value, others in pairs:
            print(f"{model_type}: {key} = {json.dumps(value)}" + (f" with {json.dumps(others)}" if others else ""))
            if key not in modelled:
                print(f"  {key} is not a modelled key of {model_type} in docs/config-keys.md")
                failed += 1
                continue
            d = os.path.join(work, model_type, re.sub(r"[^A-Za-z0-9_]", "_", key))
            os.makedirs(d)
            changed = json.loads(json.dumps(cfg))
            changed["model_type"] = model_type  # deepseek_v3's runs are on kimi-k2
            for k, v in others.items():
                put(changed, k, v)
            put(changed, key, value)
            config = os.path.join(d, "config.json")
            with open(config, "w") as f:
                json.dump(changed, f)
            seam_run(seam, ["--hf-config", config], os.path.join(d, "dump"))
            if check_dump(os.path.join(d, "dump")) != 0:
                failed += 1
                continue
            a, b = last_hidden(base), last_hidden(os.path.join(d, "dump"))
            if a.shape == b.shape and np.array_equal(a, b):
                print(f"  {key} = {json.dumps(value)} leaves the outputs as they were")
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
