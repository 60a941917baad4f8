#!/usr/bin/python3
"""Validates what `seam CMD --format json` writes against docs/schemas/CMD.schema.json.

For each command the script runs the built seam on real invocations, checks
the exit code, that stdout is exactly one JSON object whose version key
names the document, and validates it with the `jsonschema` module (Draft 2020-12).
It then mutates each document (an unknown key added, a key deleted, at the
top and in nested objects) and asserts the schema rejects every mutation: the
schemas are strict, so a field added to the output but not to its schema, or
a required field that disappears, fails here. `enums` checks that the
schemas' name lists are the names the sources define (EnumNames tables and
the step kinds), and that the definitions the schemas share are the same.

    check_schemas.py --seam build/seam --root . --work DIR [--mpirun PATH] CHECK...

CHECK: plan models diff run sweep compare check enums (default: all).
"""
import argparse
import copy
import json
import pathlib
import re
import shutil
import subprocess
import sys

import jsonschema

VERSION_KEYS = {"plan": ("seam_pipeline", 3), "models": ("seam_models", 1), "diff": ("seam_diff", 1),
                "run": ("seam_run", 1), "sweep": ("seam_sweep", 1), "compare": ("seam_compare", 1),
                "check": ("seam_check", 1)}
CHECKS = ["plan", "models", "diff", "run", "sweep", "compare", "check", "enums"]


class Failure(Exception):
    pass


class Checker:
    def __init__(self, args):
        self.seam = args.seam
        self.root = pathlib.Path(args.root)
        self.configs = self.root / "configs"
        self.work = pathlib.Path(args.work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.mpirun = args.mpirun
        self.validators = {}
        self.documents = 0
        self.mutations = 0

    def schema(self, name):
        return json.loads((self.root / "docs" / "schemas" / f"{name}.schema.json").read_text())

    def validator(self, name):
        if name not in self.validators:
            schema = self.schema(name)
            jsonschema.Draft202012Validator.check_schema(schema)
            self.validators[name] = jsonschema.Draft202012Validator(schema)
        return self.validators[name]

    def run(self, argv, code=0, prefix=None):
        cmd = (prefix or []) + [self.seam] + argv
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode != code:
            raise Failure(f"{' '.join(cmd)}: exit {p.returncode}, expected {code}\nstderr:\n{p.stderr}")
        return p

    def document(self, name, argv, code=0, prefix=None):
        """Runs seam, validates its stdout against the schema, checks that the
        schema rejects mutations of it; returns the document."""
        p = self.run(argv, code, prefix)
        what = " ".join(argv)
        try:
            doc = json.loads(p.stdout)  # exactly one document: anything around it is a syntax error
        except json.JSONDecodeError as e:
            raise Failure(f"seam {what}: stdout is not one JSON document ({e}):\n{p.stdout[:2000]}")
        if not isinstance(doc, dict) or not doc:
            raise Failure(f"seam {what}: the document is not an object")
        key, version = VERSION_KEYS[name]
        if doc.get(key) != version:
            raise Failure(f"seam {what}: {key!r} is {str(doc.get(key))[:100]}, expected {version}")
        self.validate(name, doc, what)
        self.reject_mutations(name, doc, what)
        self.documents += 1
        print(f"ok  seam {what}")
        return doc

    def validate(self, name, doc, what):
        errors = sorted(self.validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:10]]
            raise Failure(f"seam {what}: the output breaks {name}.schema.json:\n" + "\n".join(lines))

    def reject_mutations(self, name, doc, what):
        """Each object (of a large document, one of each shape): an unknown key
        added must be rejected, and so must each of its keys deleted."""
        for path in sample(list(object_paths(doc))):
            where = "/" + "/".join(map(str, path))
            for key in [None] + list(at(doc, path)):
                mutated = copy.deepcopy(doc)
                target = at(mutated, path)
                if key is None:
                    target["seam_unknown_field"] = 1
                else:
                    del target[key]
                self.mutations += 1
                if self.validator(name).is_valid(mutated):
                    change = "an unknown key added" if key is None else f"{key!r} deleted"
                    raise Failure(f"seam {what}: {name}.schema.json accepts the document with {change} at {where}: "
                                  "the schema is not strict there")

    # ---- the commands ----

    def check_plan(self):
        deepseek = ["deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe", "a2a", "--pp", "2"]
        doc = self.document("plan", ["plan"] + deepseek + ["--format", "json"])
        expect(len(doc["ranks"]) == 2, "deepseek-v2-lite --pp 2 writes two ranks")
        expect(doc["ranks"][0]["config"]["moe"] == "a2a", "the plan names --moe a2a")
        kimi = self.document("plan", ["plan", "--hf-config", str(self.configs / "kimi-k2.json"), "--tp", "8",
                                      "--moe", "a2a", "--dispatch-dtype", "fp8", "--pp", "2", "--format", "json"])
        expect(kimi["ranks"][0]["dispatch_dtype"] == "fp8", "kimi-k2's plan names the fp8 dispatch")
        scattered = self.document("plan", ["plan", "llama", "--tp", "2", "--input-scattered", "--reduction", "rs",
                                           "--format", "json"])
        variants = [line["variant"] for line in scattered["ranks"][0]["lines"]]
        expect(variants == ["ordinary", "input-scattered"], f"an input-scattered plan has both lines: {variants}")
        self.document("plan", ["plan", "nemotron-h", "--tp", "2", "--attn-dp", "2", "--pp-split", "2+4",
                               "--act-dtype", "fp32", "--format", "json"])
        self.document("plan", ["plan", "--hf-config", str(self.configs / "deepseek-v4-flash.json"), "--tp", "4",
                               "--moe", "a2a", "--layers", "4", "--format", "json"])
        self.document("plan", ["plan", "nemotron-nas", "--tp", "4", "--attn-dp", "2", "--reduction", "rs+rsv",
                               "--format", "json"])
        # show writes the plan it reads back.
        path = self.work / "deepseek.json"
        path.write_text(self.run(["plan"] + deepseek + ["--format", "json"]).stdout)
        shown = self.document("plan", ["show", str(path), "--format", "json"])
        expect(shown == doc, "seam show --format json writes the plan it read")

    def check_models(self):
        doc = self.document("models", ["models", "--format", "json"])
        table = self.run(["models"]).stdout.split("\n\n", 1)[1]  # after the paragraph in plain words
        names = [line.split()[0] for line in table.splitlines() if line and not line[0].isspace()]
        expect([m["name"] for m in doc["models"]] == names, "models --format json lists the table's models in order")
        for m in doc["models"]:
            if m["real_config"] is not None:
                expect((self.root / m["real_config"]).is_file(), f"{m['name']}'s real config {m['real_config']} exists")

    def check_diff(self):
        args = ["llama", "--tp", "2"]
        a = self.work / "a.json"
        b = self.work / "b.json"
        a.write_text(self.run(["plan"] + args + ["--format", "json"]).stdout)
        b.write_text(self.run(["plan"] + args + ["--input-scattered", "--format", "json"]).stdout)
        differ = self.document("diff", ["diff", str(a), str(b), "--format", "json"], code=1)
        expect(not differ["equal"] and differ["differences"], "diff of different plans lists differences")
        table = self.run(["diff", str(a), str(b)], code=1).stdout.splitlines()
        expect(differ["differences"] == table[:-1], "diff --format json lists the table's lines")
        e = differ["estimate"]
        expect(table[-1].startswith(f"estimated on {e['hardware']} (batch {e['batch']}): decode step "
                                    f"{e['decode_seconds'][0] * 1e6:.1f} -> {e['decode_seconds'][1] * 1e6:.1f} us"),
               "the table's estimate is the document's")
        equal = self.document("diff", ["diff", str(a), str(a), "--format", "json"])
        expect(equal["equal"] and equal["differences"] == [], "diff of equal plans is equal")
        header_only = self.work / "header_only.txt"
        header_only.write_text(self.run(["plan", "llama", "--format", "text"]).stdout.splitlines()[0] + "\n")
        unpriced = self.document("diff", ["diff", str(header_only), str(a), "--format", "json"], code=1)
        expect(unpriced["estimate"] is None, "a plan with a rank of no batch line is not priced")
        # A text plan against a JSON plan of the same pipeline.
        text = self.work / "a.txt"
        text.write_text(self.run(["plan"] + args + ["--format", "text"]).stdout)
        self.document("diff", ["diff", str(text), str(a), "--format", "json"])

    def check_run(self):
        single = self.document("run", ["run", "llama", "--tp", "2", "--format", "json"])
        expect(single["kind"] == "single" and single["bit_identical"] is True, "llama at tp 2 is bit-identical")
        expect(len(single["ranks"]) == 2, "llama at tp 2 runs two ranks")
        table = self.run(["run", "llama", "--tp", "2"]).stdout
        expect(f"max |diff|: {single['max_abs_diff']:.3g}\nbit-identical: yes\n" in table,
               "the table's max |diff| and bit-identical are the document's")
        for r in single["ranks"]:
            expect(f"  rank {r['rank']}: {r['collectives']} collectives," in table,
                   f"rank {r['rank']}'s collectives are the table's")
        self.document("run", ["run", "deepseek-v2-lite", "--tp", "2", "--attn-dp", "2", "--moe", "a2a", "--pp", "2",
                              "--dtype", "bf16", "--unfused", "--format", "json"])
        dumped = self.document("run", ["run", "llama", "--tp", "2", "--dump", str(self.work / "dump"), "--force",
                                       "--format", "json"])
        expect(dumped["dump"] == str(self.work / "dump") and (self.work / "dump" / "config.json").is_file(),
               "run --dump --format json dumps and names the directory")
        matrix = self.document("run", ["run", "llama", "--matrix", "--format", "json"])
        totals = matrix["totals"]
        expect(totals["configurations"] == len(matrix["configurations"]) ==
               totals["identical"] + totals["differs"] + totals["skipped"], "the matrix totals add up")
        table = self.run(["run", "llama", "--matrix"]).stdout
        expect(f"\n{totals['configurations']} configurations: {totals['identical']} bit-identical to the reference, "
               f"{totals['differs']} differ, {totals['skipped']} skipped\n" in table,
               "the table's totals are the document's")
        moe = self.document("run", ["run", "qwen3-moe", "--matrix", "--format", "json"])
        expect(moe["pairs"], "an MoE matrix reports the pairs that differ by design")
        generation = self.document("run", ["run", "llama", "--tp", "2", "--attn-dp", "2", "--requests", "5:3,2:4@1",
                                           "--generate", "2", "--chunk", "2", "--mixed", "--format", "json"])
        expect(generation["kind"] == "generation" and generation["bit_identical"] is True,
               "a generation is bit-identical to its teacher-forced reference")
        expect([len(r["tokens"]) for r in generation["requests"]] == [3, 4], "each request's own output length")
        expect(generation["fed_tokens"] == 5 + 3 - 1 + 2 + 4 - 1, "every token fed is a row checked")
        record = self.document("run", ["run", "--hf-config", str(self.configs / "kimi-k2.json"), "--layers", "2",
                                       "--tp", "8", "--moe", "a2a", "--backend", "record", "--format", "json"])
        expect(record["backend"] == "record" and record["bit_identical"] is None, "the record backend compares nothing")
        if self.mpirun:
            mpi = ["--allow-run-as-root", "--oversubscribe", "-np", "2"]
            for mode in ("canonical", "native"):
                doc = self.document("run", ["run", "llama", "--tp", "2", "--backend", "mpi", "--mpi-mode", mode,
                                            "--format", "json"], prefix=[self.mpirun] + mpi)
                expect(doc["mpi_mode"] == mode, f"the MPI run names --mpi-mode {mode}")

    def check_sweep(self):
        doc = self.document("sweep", ["sweep", "--max-stages", "2", "--jobs", "2", "--format", "json"])
        expect(doc["violations"] == 0 and doc["cuts"] > 0, "sweep --max-stages 2 checks cuts without violations")
        expect(len(doc["per_config"]) == doc["configs"], "a row per configuration")
        expect(len(doc["per_model"]) == doc["models"], "a row per model")
        table = self.run(["sweep", "--max-stages", "2", "--jobs", "2"]).stdout
        expect(f"\nchecked {doc['cuts']} cuts in " in table, "the table checked the document's cuts")

    def check_compare(self):
        qwen = str(self.configs / "qwen3-30b-a3b.json")
        doc = self.document("compare", ["compare", "--hf-config", qwen, "--gpus", "8", "--format", "json"])
        expect(doc["considered"] == doc["bound"] + doc["merged"] + sum(doc["rejected"].values()),
               "compare's counts add up")
        table = self.run(["compare", "--hf-config", qwen, "--gpus", "8"]).stdout
        expect(f"\n{doc['considered']} configurations: {doc['bound']} bind ({doc['fit']} fit in memory), "
               f"{doc['merged']} the same steps" in table, "the table's counts are the document's")
        expect(table.startswith(f"{doc['model']} on {doc['gpus']} GPUs ({doc['nodes']} node of "
                                f"{doc['gpus_per_node']}, {doc['hardware']}: {doc['hardware_summary']})"),
               "the table's header is the document's")
        # From an engine's command line: where its own configuration ranks, as the line after the header says.
        engine = ["--top", "3", "--engine", "sglang", "--", "--model-path", str(self.configs / "deepseek-v2-lite.json"),
                  "--tp", "8", "--dp", "4", "--enable-dp-attention", "--moe-a2a-backend", "deepep"]
        doc = self.document("compare", ["compare", "--format", "json"] + engine)
        e = doc["engine"]
        line = next((l for l in self.run(["compare"] + engine).stdout.splitlines()
                     if l.startswith("the SGLang configuration")), "")
        expect(e is not None and line.startswith(f"the SGLang configuration ({e['flags']}) ranks {e['rank']} of "
                                                 f"{doc['bound']}: "),
               f"the table's engine line {line!r} is the document's {e}")
        # --explain: the candidate's decode step taken apart, a pipeline of two ranks.
        explained = self.document("compare", ["compare", "--hf-config", str(self.configs / "deepseek-v2-lite.json"),
                                              "--gpus", "4", "--top", "1", "--explain", "2", "--format", "json"])
        expect(explained["explain"]["rank"] == 2 and explained["explain"]["ranks"], "--explain 2 takes rank 2 apart")
        # --emit: each candidate's launch lines or the engine's reason, both forms.
        emitted = self.document("compare", ["compare", "--hf-config", str(self.configs / "deepseek-v2-lite.json"),
                                            "--gpus", "8", "--top", "40", "--emit", "sglang", "--format", "json"])
        kinds = {"lines" in k["launch"] for k in emitted["ranked"]}
        expect(kinds == {True, False}, f"--emit sglang writes some lines and refuses some: {kinds}")
        # --disaggregate: each split's pools add up to the GPUs.
        split = self.document("compare", ["compare", "--hf-config", str(self.configs / "llama-3.1-8b.json"), "--gpus",
                                          "8", "--isl", "2000", "--osl", "500", "--disaggregate", "--format", "json"])
        expect(split["disaggregated"] and all(x["prefill"]["gpus"] + x["decode"]["gpus"] == 8
                                              for x in split["disaggregated"]), "--disaggregate splits the GPUs")
        # --pareto and an objective: the frontier, each point faster for a user and slower per GPU than the one
        # before it; the ranking by TPOT.
        pareto = self.document("compare", ["compare", "--hf-config", str(self.configs / "llama-3.1-8b.json"), "--gpus",
                                           "4", "--isl", "500", "--osl", "200", "--objective", "latency", "--pareto",
                                           "--format", "json"])
        f = pareto["frontier"]
        expect(pareto["objective"] == "latency" and len(f) > 2, "--pareto gives a frontier")
        expect(all(a["tpot_seconds"] <= b["tpot_seconds"] and a["tokens_per_gpu"] < b["tokens_per_gpu"]
                   for a, b in zip(f, f[1:])), "the frontier trades a user's speed for output per GPU")
        fitting = [k for k in pareto["ranked"] if k["fits"] and k["meets"]]
        expect(all(a["tpot_seconds"] <= b["tpot_seconds"] for a, b in zip(fitting, fitting[1:])),
               "--objective latency ranks by TPOT")
        self.document("compare", ["compare", "--hf-config", str(self.configs / "deepseek-v2-lite.json"), "--gpus", "16",
                                  "--nodes", "2", "--hardware", "h200", "--weight-dtype", "fp8", "--dispatch-dtype",
                                  "fp8", "--top", "1000", "--format", "json"])

    def check_check(self):
        deepseek = ["deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--moe", "a2a"]
        traces = self.work / "check-trace"
        if traces.exists():
            shutil.rmtree(traces)
        self.run(["run"] + deepseek + ["--write-trace", str(traces), "--trace-format", "nccl"])
        files = sorted(str(p) for p in traces.iterdir())
        clean = self.document("check", ["check"] + deepseek + ["--trace"] + files + ["--format", "json"])
        expect(clean["ok"] and clean["allowances"] and all(r["divergence"] is None for r in clean["ranks"]),
               "a run's own trace checks clean, with the allowances it used")
        # Rank 0 completes a sum twice: the last all-reduce of its log said again.
        log = pathlib.Path(files[0])
        lines = log.read_text().splitlines(keepends=True)
        last = max(i for i, l in enumerate(lines) if "NCCL INFO AllReduce:" in l)
        log.write_text("".join(lines[:last + 1] + [lines[last]] + lines[last + 1:]))
        bad = self.document("check", ["check"] + deepseek + ["--trace"] + files + ["--format", "json"], code=1)
        expect(not bad["ok"] and bad["ranks"][0]["divergence"]["defect"] == "a sum completed twice",
               "a sum completed twice is named")

    def check_enums(self):
        """The schemas' name lists are the sources' names; shared definitions agree."""
        sources = enum_names(self.root)
        step_kinds = re.findall(r'X\(k\w+, "([^"]+)"', (self.root / "include/seam/step_kind.h").read_text())
        rows = re.findall(r'if \(text == "(\w+)"\) return Rows::', (self.root / "src/core/layout.cc").read_text())
        plan = self.schema("plan")["$defs"]
        run = self.schema("run")["$defs"]
        expected = {
            ("plan", "stepKind"): step_kinds,
            ("plan", "rows"): rows,
            ("plan", "operand"): sources["Operand"],
            ("plan", "group"): sources["Group"],
            ("plan", "owed"): sources["Owed"],
            ("plan", "update"): sources["UpdateKind"],
            ("plan", "wireDtype"): sources["WireDtype"],
            ("plan", "moe"): sources["MoeMode"],
            ("plan", "reduction"): sources["Reduction"],
            ("plan", "decl.kind"): sources["StageKind"],
            ("plan", "decl.attention_sum"): sources["AttentionSum"],
            ("plan", "decl.read"): sources["ReadKind"],
            ("plan", "line.variant"): sources["Variant"],
            ("plan", "line.end.kind"): sources["EndKind"],
            ("run", "dtype"): sources["Dtype"],
            ("run", "rank.ops.op"): sources["CommOp"],
            ("run", "single.mpi_mode"): sources["MpiMode"],
            ("compare", "engine.name"): sources["Engine"],
        }
        schemas = {"plan": plan, "run": run, "compare": self.schema("compare")["$defs"]}
        for (schema, where), names in expected.items():
            got = enum_at(schemas[schema], where)
            expect(sorted(got) == sorted(names), f"{schema}.schema.json's {where} is {got}; the sources name {names}")
        # The definitions several schemas hold are the same in each.
        shared = {}
        for name in VERSION_KEYS:
            for key, value in self.schema(name).get("$defs", {}).items():
                if key in ("config", "moe", "reduction", "wireDtype"):
                    if key in shared and shared[key][1] != value:
                        raise Failure(f"$defs/{key} differs between {shared[key][0]} and {name}.schema.json")
                    shared.setdefault(key, (f"{name}.schema.json", value))
        print("ok  the schemas' enums are the sources' names")


def enum_names(root):
    """Each EnumNames<T>("...", {{T::kX, "name"}, ...}) table of the sources: T -> names."""
    out = {}
    for path in sorted((root / "src").rglob("*.cc")):
        text = path.read_text()
        for m in re.finditer(r"EnumNames<(\w+)>\(\s*\"[^\"]*\",\s*\{(.*?)\}\);", text, re.S):
            out[m.group(1)] = re.findall(r'\{\s*\w+::\w+,\s*"([^"]+)"\s*\}', m.group(2))
    return out


def enum_at(defs, where):
    """The enum at a dotted path of $defs ("line.end.kind": $defs.line's end's kind)."""
    parts = where.split(".")
    node = defs[parts[0]]
    for part in parts[1:]:
        node = resolve(defs, node)
        if node.get("type") == "array":
            node = node["items"]
        node = resolve(defs, node)["properties"][part]
    node = resolve(defs, node)
    if "anyOf" in node:
        node = next(resolve(defs, n) for n in node["anyOf"] if "enum" in resolve(defs, n))
    return node["enum"]


def resolve(defs, node):
    while "$ref" in node:
        node = defs[node["$ref"].split("/")[-1]]
    return node


def object_paths(doc, path=()):
    """The paths of the objects in a document (compare's `rejected` is a map of
    free-text reasons, not a record: it is left out)."""
    if isinstance(doc, dict):
        if path[-1:] != ("rejected",):
            yield path
        for k, v in doc.items():
            yield from object_paths(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from object_paths(v, path + (i,))


def sample(paths, most=40):
    """Every path of a small document; of a large one, the first of each shape
    of path (its keys, indices left out) and the last path."""
    if len(paths) <= most:
        return paths
    seen, out = set(), []
    for p in paths:
        shape = tuple(k for k in p if isinstance(k, str))
        if shape not in seen:
            seen.add(shape)
            out.append(p)
    return list(dict.fromkeys(out + [paths[-1]]))


def at(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def expect(ok, what):
    if not ok:
        raise Failure(what)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seam", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--mpirun")
    parser.add_argument("checks", nargs="*", metavar="CHECK", help=" ".join(CHECKS))
    args = parser.parse_args()
    unknown = [c for c in args.checks if c not in CHECKS]
    if unknown:
        parser.error(f"unknown checks {unknown}; the checks are {' '.join(CHECKS)}")
    checker = Checker(args)
    try:
        for check in args.checks or CHECKS:
            getattr(checker, f"check_{check}")()
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print(f"{checker.documents} documents valid; {checker.mutations} mutations rejected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
