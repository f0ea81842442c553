"""Benchmark import: the results files GPU benchmarking tools write, read into measurements,
matched to the catalogue's hardware, stored, compared with gpudesk's estimates and used to
calibrate them. No Qt here; the Benchmarks view builds on this API:

Reading (no database):
    detect.detect(text) -> format name | None          from the content, never the file name
    detect.parse_any(path) -> ParseResult               any supported format
    <format>.parse(path_or_text, source_name) -> ParseResult(measurements, problems)
        llama_bench, vllm, sglang, trtllm_bench, mlperf, nccl_tests, gpudesk_schema
    gpudesk_schema.export_measurements(measurements) -> dict   (resources/schema/benchmark.schema.json)
    matching.match_hardware(text, count=None) -> Match(accelerator_id, count, confidence, reason, ...)

Storing (store.py, in the catalogue's database):
    import_files(catalogue, paths, dry_run=False, gpu=None, count=None) -> ImportReport
        .ok, .files[FileReport], .to_json(), .format_text()
    stored_measurements(catalogue, **filters) -> list[Measurement]; count_measurements; delete_measurements
    imports(catalogue); open_questions(catalogue)
    answer_hardware(catalogue, key, accelerator_id, count); answer_model(catalogue, key, **fields)
    answers(catalogue); forget_answer(catalogue, key)

Comparing and calibrating:
    versus.compare(catalogue, measurement, calibrations=()) -> Versus (estimated Range, error, plausibility)
    versus.compare_all(catalogue, measurements=None, calibrations=(), **filters) -> list[Versus]
    calibration.calibrations(catalogue) -> tuple[Calibration, ...]
    calibration.error_before_after(catalogue) -> list[BeforeAfter]
"""
