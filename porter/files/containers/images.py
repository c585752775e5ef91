"""Container images of CUDA, and the images the targets publish (CTR001)."""

from __future__ import annotations

import re

from porter.files.facts import environment
from porter.files.sites import Site

# NVIDIA's own images, NGC's, and a tag that names CUDA or cuDNN (pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime)
_CUDA_IMAGE = re.compile(r"(?:^|/)nvidia/|nvcr\.io/nvidia|(?:^|[:@/_.-])(?:cuda|cudnn)\d*(?:[._-]|$)", re.IGNORECASE)


def cuda_image(image: str) -> bool:
    return _CUDA_IMAGE.search(image) is not None


def image_sites(image: str, start: int, target: str) -> list[Site]:
    if not cuda_image(image):
        return []
    env = environment(target)
    published = env.get("image")
    then = f"; the target's: `{published}` ({env.get('image_note')})" if published else f"; {env.get('image_note')}"
    return [Site("CTR001", start, start + len(image), None, message=f"`{image}` is a CUDA image{then}")]
