"""Command-line entry points, one page each: the work is done by the library they call.

    main_job.py    make run          verif.regress.main_job
    regress.py     make regress      verif.regress.regress (suites, shards, Dask, merge)
    shards.py      a suite's shard plan, printed             verif.regress.shards
    waves.py       make waves        verif.regress.waves
    bench.py       make bench        verif.bench.*
    mutants.py     make mutants      verif.mutation.rtl_run (and the host's: mutants.py host)
    coverage.py    make coverage     verif.coverage.report (code coverage: coverage.py code)
    report.py      one report or example on its own          verif.report.*
"""
