"""The host's mutants: the chapter's 18 one-line breaks of the page table, the window and the host,
and two of our own that survived a first run (each closed by a new test).

The window and host mutants break the step rule (model/kv/step_rule.py) that the reference host, the
float reference and the testbench share, so the checks that catch them derive the rule
independently (page counts in closed form, a float recomputation over exactly the last W tokens)."""

from __future__ import annotations

from verif.mutation.framework import Mutant

PAGED, TINY_LM, GEOMETRY = "model/kv/paged.py", "model/lm/tiny_lm.py", "model/chip/geometry.py"
HOST, RULE = "model/host/decode.py", "model/kv/step_rule.py"


def _m(group: str, description: str, path: str, original: str, mutated: str) -> Mutant:
    """A mutant named after its description's words (stable across runs and machines)."""
    name = "-".join(description.replace(",", "").replace("'", "").split()[:8])
    return Mutant(name, path, original, mutated, description, group)


HOST_MUTANTS: tuple[Mutant, ...] = (
    # ---- the chapter's 18 --------------------------------------------------------------------
    _m("page table", "a page freed by its last owner is not returned to the free list",
       PAGED, "self._free.append(page)", "pass"),
    _m("page table", "a freed page is put on the free list while others still share it",
       PAGED, "if count == 1:", "if count >= 1:"),
    _m("page table", "fork does not count the new owner",
       PAGED, "self._refcounts[page] += 1", "pass"),
    _m("page table", "no copy before writing into a shared page",
       PAGED, "elif self._refcounts[request.pages[-1]] > 1:", "elif False:"),
    _m("page table", "the copy-on-write copy is empty",
       PAGED, "self.pool[private] = self.pool[shared]", "self.pool[private] = 0"),
    _m("page table", "the copy keeps the shared page's reference",
       PAGED, "self._unref(shared)", "pass"),
    _m("page table", "a new page is taken from a full page's neighbour (offset uses page+1)",
       GEOMETRY, "return row % page_size", "return row % (page_size + 1)"),
    _m("page table", "the block-table lookup ignores pages already dropped",
       PAGED, "return page_of(logical, self.page_size) - request.dropped",
       "return page_of(logical, self.page_size)"),
    _m("page table", "trim releases a page that still holds a needed row",
       PAGED, "n_release = page_of(keep_from, self.page_size) - request.dropped",
       "n_release = -(-keep_from // self.page_size) - request.dropped"),
    _m("page table", "trim keeps pages that are completely outside the window",
       PAGED, "n_release = page_of(keep_from, self.page_size) - request.dropped",
       "n_release = page_of(keep_from, self.page_size) - request.dropped - 1"),
    _m("page table", "release forgets the request's pages",
       PAGED, "for page in request.pages:", "for page in []:"),
    _m("page table", "exhaustion is not reported",
       PAGED, "if not self._free:", "if False:"),
    _m("window", "the float reference keeps W rows, not W-1",
       RULE, "plan = plan_step(n_cached + 1, window, sinks)",
       "plan = plan_step(n_cached + 1, None if window is None else window + 1, sinks)"),
    _m("window", "the chip's context is W+1",
       RULE, "context = context_size(step, window)",
       "context = context_size(step, None if window is None else window + 1)"),
    _m("host", "the gather starts one row late",
       RULE, "return StepPlan(step, window, context, step - context, step - 1, keep_from)",
       "return StepPlan(step, window, context, step - context + 1, step - 1, keep_from)"),
    _m("host", "the gather returns values where keys belong",
       HOST, "return rows[:, KEY], rows[:, VALUE]", "return rows[:, VALUE], rows[:, KEY]"),
    _m("host", "pages outside the window are never released",
       HOST, "self.cache.trim(plan.keep_from)", "self.cache.trim(0)"),
    _m("host", "the trim point is one token too late",
       RULE, "return max(0, step + 1 - window + sinks)", "return max(0, step - window + sinks)"),
    # ---- our own: each survived once and was closed by a new test ---------------------------
    _m("host", "pages in use count only the request's pages, not the pool's",
       HOST, "return self.table.used()", "return len(self.table.block_table(self.rid))"),
    _m("window", "the float softmax does not subtract the maximum score",
       TINY_LM, "weights = np.exp(scores - scores.max())", "weights = np.exp(scores)"),
)
