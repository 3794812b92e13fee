#!/usr/bin/env python3
"""Writes the small GPT-2-layout checkpoint and inputs that configs/layer_lab.json
and configs/layer_units.json run on. Its weights are random, not a trained
model's: it stands in for a real checkpoint so that the lab runs end to end
in CI without downloading one.

  data/tiny_gpt2/model.safetensors   two blocks, d = 16, MLP hidden 64, F16,
                                     under GPT2LMHeadModel's names
                                     (transformer.h.N.mlp.c_fc / c_proj, Conv1D)
  data/tiny_gpt2/config.json         activation_function gelu_new, as GPT-2's
  data/tiny_gpt2_inputs.safetensors  inputs [512, 16]: N(0, 1) vectors, half of
                                     them (group 1) with a planted direction f
                                     added at strength 2; group [512]; readout
                                     [16] = f, so the lab asks which units
                                     respond to f and what removing the layer's
                                     write along f does to it

The values are drawn with a fixed torch seed and stored as the file says;
run with /usr/bin/python3 (Debian's python3-torch) from this folder."""
import json
import os
import struct

import torch

D, HIDDEN, LAYERS, ROWS = 16, 64, 2, 512


def write_safetensors(path, tensors, metadata):
    header, data = {"__metadata__": metadata}, b""
    for name, (code, t) in tensors.items():
        t = t.detach().contiguous()
        raw = t.to(torch.float16).numpy().view("<u2").tobytes() if code == "F16" else t.to(torch.float32).numpy().astype("<f4").tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


gen = torch.Generator().manual_seed(46)
note = {"made_by": "make_tiny_gpt2.py", "weights": "random (not a trained model)"}
tensors = {"transformer.wte.weight": ("F16", torch.randn(100, D, generator=gen) * 0.1)}
for n in range(LAYERS):
    p = f"transformer.h.{n}."
    tensors[p + "ln_2.weight"] = ("F32", torch.ones(D))
    tensors[p + "mlp.c_fc.weight"] = ("F16", torch.randn(D, HIDDEN, generator=gen) / D**0.5)  # Conv1D: [in, out]
    tensors[p + "mlp.c_fc.bias"] = ("F16", torch.randn(HIDDEN, generator=gen) * 0.1)
    tensors[p + "mlp.c_proj.weight"] = ("F16", torch.randn(HIDDEN, D, generator=gen) / HIDDEN**0.5)
    tensors[p + "mlp.c_proj.bias"] = ("F16", torch.zeros(D))
os.makedirs("data/tiny_gpt2", exist_ok=True)
write_safetensors("data/tiny_gpt2/model.safetensors", tensors, note)
with open("data/tiny_gpt2/config.json", "w") as f:
    json.dump({"model_type": "gpt2", "activation_function": "gelu_new", "n_embd": D, "n_layer": LAYERS,
               "note": "random weights, made by make_tiny_gpt2.py"}, f, indent=2)
    f.write("\n")

f_dir = torch.randn(D, generator=gen)
f_dir /= f_dir.norm()
x = torch.randn(ROWS, D, generator=gen)
group = (torch.arange(ROWS) % 2).to(torch.float32)
x += 2.0 * group[:, None] * f_dir[None, :]
write_safetensors("data/tiny_gpt2_inputs.safetensors",
                  {"inputs": ("F32", x), "group": ("F32", group), "readout": ("F32", f_dir)},
                  {"made_by": "make_tiny_gpt2.py", "group": "1: planted direction added at strength 2"})
print("wrote data/tiny_gpt2 and data/tiny_gpt2_inputs.safetensors")
