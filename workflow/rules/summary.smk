# The run summary: the learning curve on the fixed Elo ladder, the run-relative ratings and the time to
# target (minigo ratings), then the report's other plots.


rule ratings:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        results=summary_inputs,
    output:
        csv=f"{SUMMARY}/{layout.RATINGS_CSV}",
        json=f"{SUMMARY}/{layout.RATINGS_FILE}",
        time_to_target=f"{SUMMARY}/{layout.TIME_TO_TARGET_FILE}",
        elo=report(
            f"{SUMMARY}/{layout.ELO_PLOT}",
            caption="../report/elo.rst",
            category="Summary",
        ),
        winrate=report(
            f"{SUMMARY}/{layout.WINRATE_PLOT}",
            caption="../report/winrate.rst",
            category="Summary",
        ),
        learning_curve=report(
            f"{SUMMARY}/{layout.LEARNING_CURVE_PLOT}",
            caption="../report/learning_curve.rst",
            category="Summary",
        ),
    log:
        layout.summary_log_path(ROOT, "ratings"),
    resources:
        runtime=10,
    params:
        minigo=MINIGO,
        out_dir=directory_of("json"),
    shell:
        "{params.minigo} ratings --config {input.config:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule plots:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        elo=f"{SUMMARY}/{layout.RATINGS_FILE}",
        results=summary_inputs,
    output:
        loss=report(
            f"{SUMMARY}/{layout.LOSS_PLOT}",
            caption="../report/loss.rst",
            category="Summary",
        ),
        lengths=report(
            f"{SUMMARY}/{layout.GAME_LENGTHS_PLOT}",
            caption="../report/game_lengths.rst",
            category="Summary",
        ),
        resign=report(
            f"{SUMMARY}/{layout.RESIGN_PLOT}",
            caption="../report/resign.rst",
            category="Summary",
        ),
        status=report(
            f"{SUMMARY}/{layout.STATUS_FILE}",
            caption="../report/status.rst",
            category="Summary",
        ),
    log:
        layout.summary_log_path(ROOT, "plots"),
    resources:
        runtime=10,
    params:
        minigo=MINIGO,
        root=directory_of("config"),
        out_dir=directory_of("status"),
    shell:
        "{params.minigo} plots --root {params.root:q} --out-dir {params.out_dir:q}"
        " > {log:q} 2>&1"
