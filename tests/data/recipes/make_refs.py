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

# resampling: OpenCV's cv2.resize (INTER_NEAREST / CUBIC / LANCZOS4), PIL's Image.resize (BILINEAR,
# BICUBIC, LANCZOS: always antialiased when shrinking) and torchvision's F.resize(antialias=True) on a
# uint8 tensor, to 61x37 (shrink 1.97 / 2.43), 23x17 (shrink 5.2) and, OpenCV's only, 144x108 (enlarge 1.2)
import cv2
pil = Image.fromarray(src)
for w, h in ((61, 37), (23, 17), (144, 108)):
    for name, m in (('nearest', cv2.INTER_NEAREST), ('cubic', cv2.INTER_CUBIC), ('lanczos', cv2.INTER_LANCZOS4)):
        save('cv-%s-%dx%d.rgb' % (name, w, h), cv2.resize(src, (w, h), interpolation=m))
    if w > 120:
        continue  # the antialiased filters matter when shrinking
    for name, m in (('linear', Image.BILINEAR), ('cubic', Image.BICUBIC), ('lanczos', Image.LANCZOS)):
        save('pil-%s-%dx%d.rgb' % (name, w, h), np.asarray(pil.resize((w, h), m)))
    for name, m in (('linear', IM.BILINEAR), ('cubic', IM.BICUBIC)):
        save('tv-%s-%dx%d.rgb' % (name, w, h), F.resize(t, [h, w], interpolation=m, antialias=True).permute(1, 2, 0).numpy())
