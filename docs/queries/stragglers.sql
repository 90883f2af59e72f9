-- Ranks by lateness, over per-trace JSON Lines exports (docs/performance.md, "report at scale"):
-- export each trace into its own file (the file name keeps processes of different hosts apart),
-- then run this in DuckDB from the directory holding export/. Arrival = the kernel start converted
-- into the trace's clock (gpuStart), else the Coll start, put on CLOCK_REALTIME by the file's
-- ProfilerInit realtimeOffsetUs; lateness = arrival - the collective's median arrival.
-- `details` differs between record types, so DuckDB reads it as JSON: fields are extracted and cast.
CREATE VIEW ev AS SELECT * FROM read_ndjson_auto('export/*.jsonl', filename = true);
CREATE VIEW anchor AS
  SELECT DISTINCT filename, CAST(details->>'realtimeOffsetUs' AS DOUBLE) AS off, details->>'hostname' AS host
  FROM ev WHERE recordType = 'lifecycle' AND func = 'ProfilerInit';
CREATE VIEW arrival AS
  SELECT e.commId, e.rank, CAST(e.details->>'seq' AS BIGINT) AS seq, a.host,
         coalesce(CAST(e.details->>'gpuStart' AS DOUBLE), e.start.ts) + a.off AS t_us
  FROM ev e JOIN anchor a USING (filename)
  WHERE e.recordType = 'event' AND e.type = 'ncclProfileColl';
SELECT commId, rank, any_value(host) AS host,
       round(median(t_us - med), 1) AS median_late_us, round(quantile_cont(t_us - med, 0.99), 1) AS p99_late_us
FROM (SELECT *, median(t_us) OVER (PARTITION BY commId, seq) AS med FROM arrival)
GROUP BY commId, rank
ORDER BY median_late_us DESC
LIMIT 10;
