"""Settings for every test process and for the kernels and servers it starts (they inherit the environment).

pytest runs on two workers (``-n 2``), and each notebook kernel would otherwise start one OpenMP thread
per core: four busy threads on two cores, whose spin-waits made a 1 s torch loop take 15 s. One thread
per process keeps both cores busy without that. Set the variables yourself to override.
"""

import os

for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
