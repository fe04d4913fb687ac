"""The testplan: verif/testplan/testplan.yml, its checks, and verif/TESTPLAN.md rendered from it."""
