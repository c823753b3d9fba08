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

# torchvision's policies written in recio's spec grammar, from torchvision's own tables: AutoAugment's
# CIFAR-10 and SVHN policies (the specs autoaugment(cifar10|svhn) expand to these strings: tests/test_recipes.c), RandAugment
# (2, 9) and TrivialAugmentWide (randaugment(2,9) / trivialaugment expand to these).
# Signed magnitudes pick either sign with equal chance; translations of AutoAugment and RandAugment
# are fractions of the image size (translate_rel), TrivialAugmentWide's are pixels (translate).
import torchvision.transforms as T

def g(v):
    return '%g' % float(np.float32(v))

def op_text(name, m, rel):
    if name == 'Identity': return 'identity'
    if name in ('AutoContrast', 'Equalize', 'Invert'): return name.lower()
    if name == 'ShearX': return 'shear_x(%s)' % g(m)
    if name == 'ShearY': return 'shear_y(%s)' % g(m)
    if name == 'TranslateX': return 'translate_rel(%s,0)' % g(m / rel) if rel else 'translate(%s,0)' % g(m)
    if name == 'TranslateY': return 'translate_rel(0,%s)' % g(m / rel) if rel else 'translate(0,%s)' % g(m)
    if name == 'Rotate': return 'rotate(%s)' % g(m)
    if name == 'Brightness': return 'brightness(%s)' % g(1 + m)
    if name == 'Color': return 'saturation(%s)' % g(1 + m)
    if name == 'Contrast': return 'contrast(%s)' % g(1 + m)
    if name == 'Sharpness': return 'sharpness(%s)' % g(1 + m)
    if name == 'Posterize': return 'posterize(%d)' % int(m)
    if name == 'Solarize': return 'solarize(%s)' % g(m)
    raise ValueError(name)

def signed(name, m, sign, rel):
    if sign and m != 0:
        return 'random_choice(%s, %s)' % (op_text(name, m, rel), op_text(name, -m, rel))
    return op_text(name, m, rel)

S = 331  # translations as fractions: magnitudes for a 331-pixel image, divided by 331
for pol in ('cifar10', 'svhn'):
    aa = T.AutoAugment(getattr(T.AutoAugmentPolicy, pol.upper()))
    space = aa._augmentation_space(10, (S, S))
    subs = []
    for (n1, p1, m1), (n2, p2, m2) in aa.policies:
        parts = []
        for n, p, m in ((n1, p1, m1), (n2, p2, m2)):
            mags, sgn = space[n]
            mag = float(mags[m].item()) if mags.ndim > 0 else 0.0
            parts.append('random_apply(%s, %s)' % (g(p), signed(n, mag, sgn, S)))
        subs.append('(%s)' % ' '.join(parts))
    open(os.path.join(here, 'autoaugment-%s.txt' % pol), 'w').write('random_subpolicy(' + ','.join(subs) + ')\n')

def choice_over(space, bins, rel, fixed=None):
    ops = []
    for n, (mags, sgn) in space.items():
        if mags.ndim == 0:
            ops.append(op_text(n, 0.0, rel))
            continue
        idx = [fixed] if fixed is not None else range(bins)
        alts = []
        for i in idx:
            m = float(mags[i].item())
            alts += [op_text(n, m, rel), op_text(n, -m, rel)] if sgn else [op_text(n, m, rel)]
        ops.append(alts[0] if len(alts) == 1 else 'random_choice(%s)' % ', '.join(alts))
    return 'random_choice(%s)' % ', '.join(ops)

ra = T.RandAugment(2, 9)
one = choice_over(ra._augmentation_space(31, (S, S)), 31, S, fixed=9)
open(os.path.join(here, 'randaugment-2-9.txt'), 'w').write(' '.join([one] * 2) + '\n')
ta = T.TrivialAugmentWide()
open(os.path.join(here, 'trivialaugment.txt'), 'w').write(choice_over(ta._augmentation_space(31), 31, None) + '\n')
