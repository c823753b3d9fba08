# The reference outputs of tests/test_recipes.c, made by other libraries (never by recio):
#   /usr/bin/python3 tests/data/recipes/make_refs.py   (Debian 12: torch 1.13, torchvision 0.14,
#   PIL 9.4, numpy 1.24, python3-opencv 4.6). Each output is raw u8 HWC RGB bytes.
import os, sys
import numpy as np
from PIL import Image
import torch
import torchvision.transforms.functional as F
from torchvision.transforms import InterpolationMode as IM

here = os.path.dirname(os.path.abspath(__file__))
src = np.asarray(Image.open(os.path.join(here, '..', 'image', 'retina.png')).convert('RGB'))  # 120x90
t = torch.from_numpy(src).permute(2, 0, 1).contiguous()

def save(name, arr):
    np.ascontiguousarray(arr, dtype=np.uint8).tofile(os.path.join(here, name))

# torchvision's gaussian_blur on a uint8 tensor (float32 conv2d, reflect padding, round)
for k, s in ((5, 1.3), (9, 3.0), (3, 0.5)):
    save('blur-k%d-s%g.rgb' % (k, s), F.gaussian_blur(t, [k, k], [s, s]).permute(1, 2, 0).numpy())

if len(sys.argv) > 1 and sys.argv[1] == 'resize':
    pass
