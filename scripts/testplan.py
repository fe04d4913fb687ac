"""Write verif/TESTPLAN.md from verif/testplan/testplan.yml (verif.testplan.plan).

    python -m scripts.testplan
"""

from verif.testplan.plan import MARKDOWN_FILE, load, markdown

if __name__ == "__main__":
    MARKDOWN_FILE.write_text(markdown(load()))
    print(f"wrote {MARKDOWN_FILE}")
