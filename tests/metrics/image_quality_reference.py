#!/usr/bin/env python3
"""The reference values pinned in tests/metrics/image_quality_test.cc, from scikit-image.

Not run by the tests (no Python at test time). Run once in a throwaway venv:
  python3 -m venv /tmp/q && /tmp/q/bin/pip install numpy scikit-image
  /tmp/q/bin/python tests/metrics/image_quality_reference.py
The images are the test's (every value exactly representable in float32), clamped to the
range before measuring, as ditbench does.
"""
import numpy as np
import skimage
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

B, C, H, W = 2, 3, 24, 20


def images():
    a = np.zeros((B, C, H, W), np.float32)
    b = np.zeros((B, C, H, W), np.float32)
    for n in range(B):
        for c in range(C):
            for y in range(H):
                for x in range(W):
                    v = ((x * 7 + y * 13 + c * 5 + n * 3) % 17) / 16.0
                    a[n, c, y, x] = v
                    b[n, c, y, x] = v + (((x * 3 + y * 5 + n) % 7) - 3) / 64.0
    return a, b


def measure(a, b, low, high):
    a, b = np.clip(a, low, high).astype(np.float64), np.clip(b, low, high).astype(np.float64)
    r = high - low
    psnr = peak_signal_noise_ratio(a, b, data_range=r)
    ssims = [structural_similarity(a[n, c], b[n, c], gaussian_weights=True, sigma=1.5,
                                   use_sample_covariance=False, data_range=r)
             for n in range(B) for c in range(C)]
    return psnr, float(np.mean(ssims))


a, b = images()
print("scikit-image", skimage.__version__, "numpy", np.__version__)
print("[0,1]:  psnr %.17g ssim %.17g" % measure(b, a, 0.0, 1.0))
print("[-1,1]: psnr %.17g ssim %.17g" % measure(2 * b - 1, 2 * a - 1, -1.0, 1.0))
