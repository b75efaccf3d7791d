# The run summary: ratings and time to target (minigo ratings), then the report's other plots.


rule ratings:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        results=summary_inputs,
    output:
        csv=f"{SUMMARY}/elo.csv",
        json=f"{SUMMARY}/elo.json",
        time_to_target=f"{SUMMARY}/time_to_target.json",
        elo=report(
            f"{SUMMARY}/elo.png", caption="../report/elo.rst", category="Summary"
        ),
        winrate=report(
            f"{SUMMARY}/winrate.png",
            caption="../report/winrate.rst",
            category="Summary",
        ),
        learning_curve=report(
            f"{SUMMARY}/learning_curve.png",
            caption="../report/learning_curve.rst",
            category="Summary",
        ),
    log:
        f"{LOGS}/summary/ratings.log",
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
        elo=f"{SUMMARY}/elo.json",
        results=summary_inputs,
    output:
        loss=report(
            f"{SUMMARY}/loss.png", caption="../report/loss.rst", category="Summary"
        ),
        lengths=report(
            f"{SUMMARY}/game_lengths.png",
            caption="../report/game_lengths.rst",
            category="Summary",
        ),
        resign=report(
            f"{SUMMARY}/resign_false_positives.png",
            caption="../report/resign.rst",
            category="Summary",
        ),
        status=report(
            f"{SUMMARY}/status.txt", caption="../report/status.rst", category="Summary"
        ),
    log:
        f"{LOGS}/summary/plots.log",
    resources:
        runtime=10,
    params:
        minigo=MINIGO,
        root=directory_of("config"),
        out_dir=directory_of("status"),
    shell:
        "{params.minigo} plots --root {params.root:q} --out-dir {params.out_dir:q}"
        " > {log:q} 2>&1"
