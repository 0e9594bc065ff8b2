/** The streams benchmark's sizes (smaller in quick mode) and where its pods live. */
import { sized } from "../lib/figures";

export const LOG_LINES = sized(200_000, 50_000);

/** Text of one log line: ~85 bytes, ~126 with the CRI prefix (200k lines ≈ 25 MB of log file). */
export const LOG_FILLER = "x".repeat(70);

export const SEQ_COUNT = sized(1_000_000, 300_000);

export const ECHO_SAMPLES = 200;

export const ECHO_WARMUP = 20;

export const HOLD_LOG_STREAMS = 200;

export const HOLD_SHELLS = 50;

export const HOLD_SECONDS = Number(process.env.BENCH_STREAMS_HOLD_SECONDS ?? sized(300, 60));

export const ROUNDS = Number(process.env.BENCH_STREAMS_ROUNDS ?? 2);

export const SAMPLE_EVERY_MS = 10_000;

/** Pods: the first carries the throughput, exec and echo runs; the hold's log streams spread over all. */
export const PODS = 4;

export const NAMESPACE = "default";
