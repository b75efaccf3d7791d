# The run's effective config, and generation 0: a randomly initialised model.


rule run_config:
    # Rewritten when the config changes (Snakemake's params trigger); jobs read it as ancient() input so
    # files that are already finished are kept. Delete them (or --forcerun) to redo them with a new config.
    output:
        EFFECTIVE_CONFIG,
    params:
        text=effective_config_text(),
    log:
        f"{LOGS}/run_config.log",
    run:
        storage.write_text(output[0], params.text)


rule bootstrap:
    input:
        config=ancient(EFFECTIVE_CONFIG),
    output:
        model=MODEL,
    wildcard_constraints:
        generation=BOOTSTRAPPED,
    log:
        f"{LOGS}/bootstrap/gen{{generation}}.log",
    resources:
        runtime=10,
    shell:
        "{MINIGO} bootstrap --config {input.config:q} --out {output.model:q} > {log:q} 2>&1"
