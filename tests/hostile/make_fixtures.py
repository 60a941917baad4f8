#!/usr/bin/python3
"""Writes the hostile inputs cases.txt refers to into DIR (the big ones are
sparse or generated, so nothing large is stored or kept in memory).

Usage: make_fixtures.py SEAM CONFIGS DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def config(configs, name, **changes):
    j = json.loads(open(os.path.join(configs, name)).read().replace("Infinity", '"Infinity"'))
    j.update(changes)
    return j


def main():
    seam, configs, d = sys.argv[1:4]
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    p = lambda name: os.path.join(d, name)  # noqa: E731

    # ---- files that are not what they claim ----
    with open(p("big.json"), "wb") as f:  # 20 GB, sparse
        f.truncate(20 << 30)
    os.mkfifo(p("fifo.json"))
    os.symlink(p("loop_b.json"), p("loop_a.json"))
    os.symlink(p("loop_a.json"), p("loop_b.json"))
    os.makedirs(p("a_directory.json"))
    write(p("empty.json"), "")
    write(p("not_json.json"), "{\"model_type\": \"llama\",")
    write(p("array.json"), "[1, 2, 3]")
    write(p("nul.json"), "{\"model_type\": \"lla\0ma\"}")
    write(p("deep.json"), "[" * 100000 + "]" * 100000)
    write(p("deep_object.json"), "{\"a\":" * 10000 + "1" + "}" * 10000)

    # ---- configs that parse but must be refused ----
    llama = open(os.path.join(configs, "llama-3.1-8b.json")).read()
    write(p("dup_key.json"), llama.replace("{", "{\"hidden_size\": 64,", 1))
    for name, changes in {
        "layers_huge.json": {"num_hidden_layers": 2147483647},
        "layers_over_limit.json": {"num_hidden_layers": 100001},
        "hidden_huge.json": {"hidden_size": 10**12},
        "hidden_negative.json": {"hidden_size": -4096},
        "hidden_float.json": {"hidden_size": 4096.5},
        "hidden_string.json": {"hidden_size": "4096"},
        "heads_zero.json": {"num_attention_heads": 0},
        "kv_not_dividing.json": {"num_key_value_heads": 3},
        "eps_zero.json": {"rms_norm_eps": 0},
        "theta_negative.json": {"rope_theta": -1},
        "vocab_zero.json": {"vocab_size": 0},
        "unknown_type.json": {"model_type": "mistral"},
        "type_number.json": {"model_type": 7},
        "rope_unknown.json": {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
        "rope_not_object.json": {"rope_scaling": "llama3"},
        "act_gelu.json": {"hidden_act": "gelu"},
        "bias.json": {"attention_bias": True},
    }.items():
        j = json.loads(llama)
        j.update(changes)
        write(p(name), json.dumps(j))
    # A MoE whose sizes stay within the importer's limits but whose products do not fit 32 bits.
    j = config(configs, "qwen3-30b-a3b.json", hidden_size=10**7, num_experts_per_tok=1000, num_experts=1000,
               num_attention_heads=8, num_key_value_heads=8, head_dim=8)
    write(p("moe_overflow.json"), json.dumps(j))
    j = config(configs, "nemotron-h-56b.json", hybrid_override_pattern="M-X")
    write(p("pattern_bad.json"), json.dumps(j))
    j = config(configs, "nemotron-super-49b.json")
    j["block_configs"] = j["block_configs"][:3]
    write(p("blocks_short.json"), json.dumps(j))
    j = config(configs, "deepseek-v2-lite.json", topk_method="group_limited_greedy", n_group=7, topk_group=1)
    write(p("groups_bad.json"), json.dumps(j))

    # ---- plans ----
    plan = subprocess.run([seam, "plan", "llama", "--tp", "2", "--format", "json"], capture_output=True,
                          text=True, check=True).stdout
    write(p("plan.json"), plan)
    j = json.loads(plan)
    j["ranks"][0]["act_dtype"] = "fp64"
    write(p("plan_act_dtype.json"), json.dumps(j))
    write(p("plan_dup.json"), plan.replace("\"hidden\":", "\"hidden\": 1, \"hidden\":", 1))
    write(p("plan_truncated.json"), plan[: len(plan) // 2])
    j = json.loads(plan)
    j["ranks"][0]["config"]["tp"] = 1 << 40
    write(p("plan_tp_huge.json"), json.dumps(j))
    for name, cp in (("plan_cp_zero.json", 0), ("plan_cp_text.json", "two"), ("plan_cp_odd.json", 3),
                     ("plan_cp_unbound.json", 2)):
        j = json.loads(plan)
        j["ranks"][0]["config"]["cp"] = cp
        write(p(name), json.dumps(j))
    for name, dcp in (("plan_dcp_zero.json", 0), ("plan_dcp_text.json", [2]), ("plan_dcp_odd.json", 3),
                      ("plan_dcp_unbound.json", 2)):
        j = json.loads(plan)
        j["ranks"][0]["config"]["dcp"] = dcp
        write(p(name), json.dumps(j))
    text = subprocess.run([seam, "plan", "llama", "--tp", "2", "--format", "text"], capture_output=True, text=True,
                          check=True).stdout
    write(p("plan.txt"), text)
    write(p("plan_garbage.txt"), text.replace("start-residual", "start-gossip", 1))
    write(p("plan_cp_garbage.txt"), text.replace(" pp=1 ", " pp=1 cp=x ", 1))
    write(p("plan_dcp_garbage.txt"), text.replace(" pp=1 ", " pp=1 dcp=-2 ", 1))
    # Plans a reader takes but the verifier refuses: ranks with no lines, a
    # header given twice, a stage turned into a no-op, stages past the bound.
    cut = subprocess.run([seam, "plan", "llama", "--tp", "2", "--pp", "2", "--format", "text"], capture_output=True,
                         text=True, check=True).stdout
    write(p("plan_header_only.txt"), cut.splitlines()[0] + "\n")
    write(p("plan_header_twice.txt"), (cut.splitlines()[0] + "\n") * 2)
    j = json.loads(plan)
    j["ranks"][0]["lines"] = []
    write(p("plan_no_lines.json"), json.dumps(j))
    j = json.loads(plan)
    next(s for s in j["ranks"][0]["lines"][0]["stages"] if s["decl"]["kind"] == "dense-ffn")["decl"]["kind"] = "no-op"
    write(p("plan_noop.json"), json.dumps(j))
    j = json.loads(plan)
    stages = j["ranks"][0]["lines"][0]["stages"]
    j["ranks"][0]["lines"][0]["stages"] = stages * (10000 // len(stages) + 1)
    write(p("plan_many_stages.json"), json.dumps(j))

    # ---- checkpoints ----
    ck = p("ck")
    subprocess.run([seam, "run", "llama", "--dump", ck], capture_output=True, check=True)
    def variant(name, edit):
        out = p(name)
        shutil.copytree(ck, out)
        edit(out)
    variant("ck_no_config", lambda o: os.remove(os.path.join(o, "config.json")))
    variant("ck_no_weights", lambda o: os.remove(os.path.join(o, "model.safetensors")))
    def fifo_config(o):
        os.remove(os.path.join(o, "config.json"))
        os.mkfifo(os.path.join(o, "config.json"))
    variant("ck_fifo_config", fifo_config)
    def fifo_weights(o):
        os.remove(os.path.join(o, "model.safetensors"))
        os.mkfifo(os.path.join(o, "model.safetensors"))
    variant("ck_fifo_weights", fifo_weights)
    def many_layers(o):
        c = json.load(open(os.path.join(o, "config.json")))
        c["num_hidden_layers"] = 100000
        json.dump(c, open(os.path.join(o, "config.json"), "w"))
    variant("ck_many_layers", many_layers)
    def huge_header(o):
        with open(os.path.join(o, "model.safetensors"), "r+b") as f:
            f.write(struct.pack("<Q", 1 << 62))
    variant("ck_huge_header", huge_header)
    def truncated(o):
        path = os.path.join(o, "model.safetensors")
        os.truncate(path, os.path.getsize(path) // 2)
    variant("ck_truncated", truncated)
    def escape_index(o):
        os.remove(os.path.join(o, "model.safetensors"))
        json.dump({"weight_map": {"model.norm.weight": "../../etc/passwd"}},
                  open(os.path.join(o, "model.safetensors.index.json"), "w"))
    variant("ck_index_escape", escape_index)
    def sparse_weights(o):
        path = os.path.join(o, "model.safetensors")
        os.remove(path)
        with open(path, "wb") as f:
            f.truncate(20 << 30)
    variant("ck_sparse_weights", sparse_weights)

    # ---- dump targets ----
    os.makedirs(p("dump_nonempty"))
    write(p("dump_nonempty/notes.txt"), "mine")
    os.makedirs(p("dump_real"))
    os.symlink(p("dump_real"), p("dump_link"))
    write(p("dump_file"), "not a directory")
    os.makedirs(p("dump_fifo"))
    os.mkfifo(p("dump_fifo/config.json"))
    os.makedirs(p("dump_linked_file"))
    os.symlink("/etc/passwd", p("dump_linked_file/inputs.safetensors"))


    # ---- names from files: control bytes, a NUL, invalid UTF-8, a huge name ----
    def named_plan(name):
        j = json.loads(plan)
        for rank in j["ranks"]:
            rank["model"] = name
        return json.dumps(j)
    write(p("plan_esc_name.json"), named_plan("evil\x1b[2J\x07name"))
    write(p("plan_nul_name.json"), named_plan("a\0b <&> \"q\" \\ \x7f"))
    write(p("plan_long_name.json"), named_plan("a" * 100000))
    # The text form carries any byte, invalid UTF-8 included.
    with open(p("plan_bad_utf8_name.txt"), "wb") as f:
        f.write(text.replace("plan llama ", 'plan "a\\xffb\\x1b[31m" ', 1).encode())
    write(p("plan_raw_esc_name.txt"), text.replace("plan llama ", "plan ll\x1bama ", 1))
    hw = {"gpus_per_node": 8, "memory_gb": 80,
          "gpu": {"tflops_bf16": 989, "tflops_fp8": 1979, "tflops_fp4": 0, "hbm_tbs": 3.35, "compute_efficiency": 0.7,
                  "memory_efficiency": 0.85, "stage_us": 20},
          "node": {"busbw_gbs": 450, "latency_us": 3},
          "network": {"busbw_gbs": 50, "latency_us": 10}, "a2a_node_gbs": 300, "a2a_network_gbs": 40,
          "a2a_latency_us": 20}
    write(p("hw_esc_name.json"), json.dumps(dict(hw, name="h100\x1b]0;title\x07", summary="sum\x1b[31mred")))


if __name__ == "__main__":
    main()
