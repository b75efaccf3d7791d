# Packing (storage.pack_old_generations): once the last window that reads generation g's games, g + W's (or a
# growing window's, window.generations_schedule), is built, its game files, job records and self-play logs go
# into one file, games/genGGGG.pack.arrow, verified before the loose files are deleted
# (minigo_core/data/pack.py). The job's output is a small marker, not the pack: Snakemake deletes a job's
# outputs before it reruns the job, and must never delete a pack. Its inputs are ancient markers, never the
# game files, so a packed generation asks nothing of its deleted files.


rule pack:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        marker=ancient(GAMES_COMPLETE),
        window=last_window,
    output:
        marker=PACKED_MARKER,
    log:
        layout.generation_log_path(ROOT, "pack", "{generation}"),
    wildcard_constraints:
        generation=PACKED,
    resources:
        runtime=30,
    params:
        minigo=MINIGO,
    shell:
        "{params.minigo} pack --config {input.config:q} --generation {wildcards.generation:q}"
        " --out {output.marker:q} > {log:q} 2>&1"
