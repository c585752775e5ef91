"""A tiny Hugging Face model trained 3 steps (the twenty-second read's hf/train.py, rewritten):
`python hf_train.py SIDE ARCH AMP`, SIDE ref (CUDA, run on the CPU by porter's shim) or xla,
ARCH gpt2|llama|bert (llama-eager: Llama with eager attention; with SDPA, bf16 autocast fails on
XLA:CPU, query and key float32 after the rotary embedding, value bfloat16), AMP fp32 or bf16
(the port adds bfloat16 autocast around the forward)."""

import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

side, arch, amp = sys.argv[1:4]
attn = {"attn_implementation": "eager"} if arch.endswith("-eager") else {}
arch = arch.removesuffix("-eager")
if side == "xla":
    import torch_xla

    torch.__future__.set_swap_module_params_on_conversion(True)  # .to() keeps tied weights tied
    dev, sync = torch_xla.device(), torch_xla.sync
else:
    dev, sync = torch.device("cuda"), (lambda: None)
small = dict(vocab_size=64, num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64)
if arch == "gpt2":
    cfg = AutoConfig.for_model("gpt2", vocab_size=64, n_layer=2, n_embd=32, n_head=2, n_positions=32)
else:
    cfg = AutoConfig.for_model(arch, max_position_embeddings=32, **small)
torch.manual_seed(0)
cls = AutoModelForMaskedLM if arch == "bert" else AutoModelForCausalLM
model = cls.from_config(cfg, **attn).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, 64, (4, 16)).to(dev)
for _ in range(3):
    opt.zero_grad()
    with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp == "bf16"):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    sync()
