"""The chapter: :func:`run` executes the jobs (:mod:`.steps`), builds each section of the page from
what they return, and judges the claims on the evidence the sections found."""

from __future__ import annotations

from dataclasses import dataclass, fields

import rcstudy.experiments.rule.steps as steps  # the jobs and their steps (jobs.execute runs them)

from ... import papers
from ...jobs import Outputs, execute
from ...runtime import Runtime
from ..section import Section, composed
from .ablation import ablation_section
from .config import Config
from .easy_hard import EasyHard, easy_hard_section
from .fine_tuned import FineTuned, fine_tuned_section
from .follow_ups import Overview, alignment_section, count_section, overview_section, positions_section
from .gates import FullProfile, learned_section
from .length_types import Length, length_section, type_section
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
    ablation: Section
    length: Length
    types: Section
    by_count: Section
    easy_hard: EasyHard
    reprints: Section

    @property
    def sections(self) -> list[Section]:
        return [getattr(self, f.name) for f in fields(self)]


def page_sections(cfg: Config, outputs: Outputs) -> Page:
    """Every section of the page, from the release, the parameters and the jobs' outputs; the
    claims' bootstrap intervals are seeded by ``cfg.sample_seed``."""
    data, prompts, _ = steps.job_inputs()
    enc_sample, lm_sample = samples(cfg, data)
    fine_tuned = fine_tuned_section(cfg, outputs, data, enc_sample, lm_sample)
    prompting = prompting_section(cfg, outputs, lm_sample)
    trained, prompted, seed = fine_tuned.trained, prompting.prompted, cfg.sample_seed
    return Page(
        release=release_section(data, prompts), reclor_join=reclor_join_section(data, steps.reclor_train_or_missing()),
        lengths=lengths_section(data), fine_tuned=fine_tuned, prompting=prompting,
        overview=overview_section(fine_tuned, prompting, seed), positions=positions_section(trained, prompted, data),
        none_option=none_section(fine_tuned.baselines, trained, prompted, seed),
        alignment=alignment_section(trained, prompted, seed),
        rationales=rationale_section(cfg, outputs, prompted, lm_sample),
        ablation=ablation_section(cfg, outputs, fine_tuned, prompted, enc_sample),
        length=length_section(cfg, trained, prompted, prompting.rows), types=type_section(cfg, data, trained),
        by_count=count_section(trained, prompted), easy_hard=easy_hard_section(data, trained, prompted),
        reprints=Section(tables={"rule_table4": papers.table("rule", "Table 4").astype("Int64")}))  # not re-run


def run(cfg: Config, rt: Runtime, *, full_profile: FullProfile | None = None) -> Results:
    """The whole chapter: its jobs (:func:`~.steps.jobs`) executed here, each section built from
    their outputs, and the claims judged on the evidence the sections found, each resting on the
    gates of the rows it reads (:func:`~.gates.learned_section`). ``full_profile``: given the jobs
    of the rows that did not learn (:func:`~.gates.full_profile_rows`), what the full profile would
    spend on each (the page passes :func:`rcstudy.plan.row_needs`), said in their warnings and in
    the claims resting on them."""
    page = page_sections(cfg, execute(steps, cfg, rt))
    learned = learned_section(cfg, page.fine_tuned.trained, page.prompting.prompted, page.prompting.gates,
                              page.rationales, full_profile)
    parts = [*page.sections, learned]
    return Results(**composed("rule", parts, learned.checks), data=steps.job_inputs()[0],
                   captions={k: v for p in parts for k, v in p.captions.items()},
                   lm_unavailable=page.prompting.prompted.unavailable,
                   systems_rows=page.overview.rows, by_split=page.release.by_split,
                   per_main_counts=page.release.per_main_counts, bars=page.overview.bars, points=page.overview.points,
                   human=page.overview.human, length_curves=page.length.curves, hard_table=page.easy_hard.table,
                   chance_sub=chance_subq(), length_bins=cfg.analyses.length_bins, losses=page.fine_tuned.losses)
