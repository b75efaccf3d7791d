# MiniGo (AlphaGo Zero) training as a Snakemake workflow: one generation = window -> train -> self-play
# (one job per selfplay.games_per_job games) -> games-complete marker, with evaluation off the critical path.
#
#   snakemake --profile profiles/local                       # a laptop
#   snakemake --profile profiles/slurm                       # a Slurm cluster (first edit the profile's
#                                                            # SITE keys: README.md, "On a Slurm cluster")
#   snakemake --profile profiles/local --configfile config/tiny.yaml
#
# Only the generations that are not finished are planned (minigo_core/pipeline/plan.py, called from
# workflow/rules/common.smk; docs/ARCHITECTURE.md, "The workflow"): the DAG, and the time to plan it, stay
# the same size at generation 100. Rules reach the library only through minigo_core.pipeline and
# minigo_core.data.layout, and each runs one `minigo COMMAND`.


# the defaults beside this file (not in the working directory: `minigo run` from an installed wheel runs
# Snakemake in the caller's directory); --configfile files are merged over them
configfile: f"{workflow.basedir}/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/generation0.smk"
include: "workflow/rules/selfplay.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/pack.smk"
include: "workflow/rules/summary.smk"


localrules:
    all,
    run_config,
    ratings,
    plots,


wildcard_constraints:
    game=r"\d{5}",


rule all:
    default_target: True
    input:
        all_targets(),
