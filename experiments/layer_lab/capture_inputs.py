#!/usr/bin/env python3
"""Writes the inputs file ffn-lab's lab reads (`inputs` in layer_lab,
unit_contrast and firing_fraction configs) from a model you have: the
vectors that enter one MLP layer, read with a PyTorch forward pre-hook, for
two groups of texts.

    python3 capture_inputs.py --model CHECKPOINT_FOLDER --layer 3 \\
        --group-a texts_with.txt --group-b texts_without.txt \\
        [--positions last|all] [--readout-token " Paris"] --out inputs.safetensors

CHECKPOINT_FOLDER is what `from_pretrained` takes (a Hugging Face folder);
each texts file holds one text a line. The file written holds
  inputs   [N, d] float32  what the layer's MLP received (after the block's
                           norm), one row per text (its last token), or per
                           token with --positions all
  group    [N]    float32  1 for a text of --group-a, 0 for --group-b
  readout  [d]    float32  with --readout-token: that token's row of the
                           output embedding, a direction whose change the
                           lab's interventions report
Then point a config at it, with `weights` the same folder and `layer` the
same block (see the README's "Your own model").

This script is optional and never run by ffn-lab's build or tests. It needs
PyTorch and, for --model, the transformers package; capture() works on any
torch module whose MLP sits at a name ending in "<layer>.mlp" (h.3.mlp,
layers.3.mlp, ...). safetensors is written by hand (struct + json), after
the published format, so the safetensors package is not needed.
"""
import argparse
import json
import struct

import torch


def write_safetensors(path, tensors):
    """tensors: name -> float32 tensor."""
    header, data = {"__metadata__": {"made_by": "capture_inputs.py"}}, b""
    for name, t in tensors.items():
        raw = t.detach().to(torch.float32).contiguous().cpu().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def mlp_of(model, layer):
    """The one module whose name ends in '<layer>.mlp'."""
    found = [(name, m) for name, m in model.named_modules() if name == f"{layer}.mlp" or name.endswith(f".{layer}.mlp")]
    if len(found) != 1:
        raise SystemExit(f"capture_inputs.py: {len(found)} modules named '*.{layer}.mlp' in the model; expected one")
    return found[0][1]


def capture(model, layer, batches, positions="last"):
    """Runs model(**batch) for each batch (a dict with input_ids and
    attention_mask) and returns the rows that entered the layer's MLP."""
    seen = []

    def hook(_module, args):
        seen.append(args[0].detach())

    handle = mlp_of(model, layer).register_forward_pre_hook(hook)
    rows = []
    try:
        with torch.no_grad():
            for batch in batches:
                seen.clear()
                model(**batch)
                x = seen[-1]  # [batch, tokens, d]
                mask = batch["attention_mask"].bool()
                if positions == "all":
                    rows.append(x[mask])
                else:
                    last = mask.sum(dim=1) - 1  # right padding: the last real token
                    rows.append(x[torch.arange(x.shape[0]), last])
    finally:
        handle.remove()
    return torch.cat(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--layer", type=int, required=True)
    ap.add_argument("--group-a", required=True)
    ap.add_argument("--group-b", required=True)
    ap.add_argument("--positions", choices=["last", "all"], default="last")
    ap.add_argument("--readout-token")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    from transformers import AutoModelForCausalLM, AutoTokenizer  # only here: capture() needs no transformers

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32).eval()

    def batches(path):
        with open(path, encoding="utf-8") as f:
            texts = [line.rstrip("\n") for line in f if line.strip()]
        for i in range(0, len(texts), args.batch):
            yield tokenizer(texts[i:i + args.batch], return_tensors="pt", padding=True)

    a = capture(model, args.layer, batches(args.group_a), args.positions)
    b = capture(model, args.layer, batches(args.group_b), args.positions)
    tensors = {"inputs": torch.cat([a, b]), "group": torch.cat([torch.ones(len(a)), torch.zeros(len(b))])}
    if args.readout_token is not None:
        ids = tokenizer(args.readout_token, add_special_tokens=False)["input_ids"]
        if len(ids) != 1:
            raise SystemExit(f"capture_inputs.py: --readout-token {args.readout_token!r} is {len(ids)} tokens; give one")
        tensors["readout"] = model.get_output_embeddings().weight[ids[0]]
    write_safetensors(args.out, tensors)
    print(f"capture_inputs.py: {len(a)} + {len(b)} rows of d = {a.shape[1]} in {args.out}")


if __name__ == "__main__":
    main()
