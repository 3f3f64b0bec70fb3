"""The chapter: :func:`run` executes the jobs (:mod:`.steps`), builds each section of the page from
what they return, and judges the claims on the sections' results."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

from IPython.display import Markdown

import rcstudy.experiments.rule.steps as steps  # the module whose functions the jobs name (jobs.execute calls them)

from ... import learning, papers
from ...jobs import Outputs, execute
from ...report import ClaimLog, md_text
from ...runtime import Runtime
from ..section import Section
from .ablation import Ablation, ablation_section
from .claims import Evidence, judge_claims
from .config import Config
from .easy_hard import EasyHard, easy_hard_section
from .fine_tuned import FineTuned, fine_tuned_section
from .follow_ups import Overview, alignment_section, count_section, overview_section, positions_section
from .gates import Gates, full_profile_rows, gates_of
from .length_types import Length, Types, length_section, type_section
from .none_option import none_section
from .prompting import Prompting, prompting_section
from .rationales import Rationales, rationale_section
from .release import Release, lengths_section, reclor_join_section, release_section
from .results import Results
from .units import chance_subq, samples


@dataclass(frozen=True)
class Page:
    """Every section's result, in the page's order."""

    release: Release
    reclor_join: Section
    lengths: Section
    fine_tuned: FineTuned
    prompting: Prompting
    overview: Overview
    positions: Section
    none_option: Section
    alignment: Section
    rationales: Rationales
    ablation: Ablation
    length: Length
    types: Types
    by_count: Section
    easy_hard: EasyHard
    reprints: Section

    @property
    def sections(self) -> list[Section]:
        return [getattr(self, f.name) for f in fields(self)]


def page_sections(cfg: Config, outputs: Outputs) -> Page:
    """Every section of the page, from the release, the parameters and the jobs' outputs."""
    data, prompts, _ = steps.job_inputs()
    enc_sample, lm_sample = samples(cfg, data)
    fine_tuned = fine_tuned_section(cfg, outputs, data, enc_sample, lm_sample)
    prompting = prompting_section(cfg, outputs, lm_sample)
    trained, prompted = fine_tuned.trained, prompting.prompted
    return Page(
        release=release_section(data, prompts), reclor_join=reclor_join_section(data, steps.reclor_train_or_missing()),
        lengths=lengths_section(data), fine_tuned=fine_tuned, prompting=prompting,
        overview=overview_section(fine_tuned, prompting), positions=positions_section(trained, prompted, data),
        none_option=none_section(fine_tuned.baselines, trained, prompted),
        alignment=alignment_section(trained, prompted),
        rationales=rationale_section(cfg, outputs, prompted, lm_sample),
        ablation=ablation_section(cfg, outputs, fine_tuned, prompted, enc_sample),
        length=length_section(cfg, trained, prompted, prompting.rows), types=type_section(cfg, data, trained),
        by_count=count_section(trained, prompted), easy_hard=easy_hard_section(data, trained, prompted),
        reprints=Section(tables={"rule_table4": papers.table("rule", "Table 4").astype("Int64")}))  # not re-run


def learned(cfg: Config, page: Page, full_profile: Callable[[dict[str, dict]], dict[str, str]] | None) -> Gates:
    """Every gate the claims rest on; a row at chance says what the full profile would spend on it
    where ``full_profile`` tells (given :func:`~.gates.full_profile_rows` of those rows)."""
    trained, prompted = page.fine_tuned.trained, page.prompting.prompted
    gates = gates_of(trained, prompted, page.rationales, cfg.sample_seed)
    stuck = [row for row, c in gates.rows().items() if not c.learned]
    if full_profile and stuck:
        gates = gates.with_full_profile(full_profile(full_profile_rows(cfg, trained, prompted, page.rationales, stuck)))
    return gates


def gate_section(gates: Gates) -> Section:
    """The table of every gate, and the warnings of the rows that did not learn (fine-tuned, prompted)."""
    rows = gates.rows()
    prompted = [c for row, c in rows.items() if row not in gates.trained]
    return Section(tables={"rule_learned": learning.table(list(rows.values()))},
                   facts={"rule_loss_warnings": Markdown(md_text(learning.warnings_text(list(gates.trained.values())))),
                          "rule_lm_warnings": Markdown(md_text(learning.warnings_text(prompted)))})


def results(cfg: Config, page: Page, gates: Gates, claims: ClaimLog) -> Results:
    """What the page shows, gathered from its sections."""
    sections = [*page.sections, gate_section(gates)]

    def merged(part: str) -> dict:
        return {k: v for s in sections for k, v in getattr(s, part).items()}

    return Results(merged("tables"), merged("facts"), claims, data=steps.job_inputs()[0], captions=merged("captions"),
                   lm_unavailable=page.prompting.prompted.unavailable, systems_rows=page.overview.rows,
                   by_split=page.release.by_split, per_main_counts=page.release.per_main_counts,
                   bars=page.overview.bars, points=page.overview.points, human=page.overview.human,
                   length_curves=page.length.curves, hard_table=page.easy_hard.table, chance_sub=chance_subq(),
                   length_bins=cfg.analyses.length_bins, losses=page.fine_tuned.losses)


def run(cfg: Config, rt: Runtime, *,
        full_profile: Callable[[dict[str, dict]], dict[str, str]] | None = None) -> Results:
    """The whole chapter: its jobs (:func:`~.steps.jobs`) executed here, each section built from
    their outputs, and the claims judged. ``full_profile``: given the jobs of the rows that did not
    learn (:func:`~.gates.full_profile_rows`), what the full profile would spend on each (the page
    passes :func:`rcstudy.plan.row_needs`), said in their warnings and in the claims resting on them."""
    outputs = execute(steps.jobs(cfg), steps, cfg, rt)
    page = page_sections(cfg, outputs)
    gates = learned(cfg, page, full_profile)
    evidence = Evidence(page.fine_tuned, page.prompting, page.rationales, page.ablation, page.types)
    return results(cfg, page, gates, judge_claims(evidence, gates, cfg.sample_seed))
