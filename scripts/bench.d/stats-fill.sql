-- Fills a folder with :calls scored calls over 30 days from :first (YYYY-MM-DD) and ~100 agents, as the
-- score worker would have left them (docs/scoring.md): the call rows, their figures with `scoring` =
-- :'fingerprint' (so no worker scores them again), one score row per category of application :'app' and
-- one for the application ('') per call, then the two daily rollups summed from those rows.
-- Pseudo-random but deterministic: every value is a hash of the call's number and a salt. Calls fall
-- between 08:00 and 18:00, last 1 to 15 minutes; 40 % of agents and 50 % of clients show an emotion (an
-- index past the end of the array is NULL: neutral).
-- Variables: company, org, folder, app, fingerprint, calls, first.
\set ON_ERROR_STOP on

-- A number in [0, 2^31) from the call's number and a salt.
CREATE FUNCTION pg_temp.h(i bigint, salt bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT hashint8extended(i, salt) & 2147483647';

CREATE TEMP TABLE bench_calls AS
SELECT i,
       'bench-' || lpad(i::text, 8, '0') AS id,
       d,
       to_char(d + (8 * 3600 + pg_temp.h(i, 3) % (10 * 3600)) * interval '1 second',
               'YYYY-MM-DD"T"HH24:MI:SS') AS datetime,
       'agent-' || lpad((pg_temp.h(i, 2) % 100)::text, 3, '0') AS agent_id,
       60 + (pg_temp.h(i, 4) % 84000) / 100.0::double precision AS duration,
       (pg_temp.h(i, 5) % 40) / 100.0::double precision AS silence_share,
       (40 + pg_temp.h(i, 6) % 30) / 100.0::double precision AS agent_share,
       (ARRAY['positive', 'negative', 'improving', 'worsening'])[pg_temp.h(i, 7) % 10 + 1] AS agent_emotion,
       (ARRAY['positive', 'negative', 'improving', 'worsening'])[pg_temp.h(i, 8) % 8 + 1] AS client_emotion
FROM (SELECT i, :'first'::timestamp + (pg_temp.h(i, 1) % 30) * interval '1 day' AS d
      FROM generate_series(1, :calls) AS i) AS g;

INSERT INTO analytics_calls (id, company, organization, folder, request_id, datetime, last_modified,
                             filename, agent_id, audio_seconds)
SELECT id, :'company', :'org', :'folder', 'bench-request-' || i, datetime,
       to_char(timestamp '2026-11-01' + i * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       id || '.json', agent_id, duration
FROM bench_calls ORDER BY id;

INSERT INTO analytics_call_facts (call_id, company, organization, folder, day, datetime, agent_id, duration,
                                  silence, words, agent_talk, client_talk, agent_emotion, client_emotion,
                                  scoring)
SELECT id, :'company', :'org', :'folder', to_char(d, 'YYYY-MM-DD'), datetime, agent_id, duration,
       duration * silence_share, round(duration * (1 - silence_share) * 2.5)::bigint,
       duration * (1 - silence_share) * agent_share, duration * (1 - silence_share) * (1 - agent_share),
       agent_emotion, client_emotion, :'fingerprint'
FROM bench_calls ORDER BY id;

-- The leaves of the application as stored (top-level category, subcategory), numbered: each hits in a
-- different share of the calls (15 % to 65 %) with a score of 1 to 4.
CREATE TEMP TABLE bench_leaves AS
SELECT row_number() OVER (ORDER BY t.key, s.key) AS k, t.key AS top, s.key AS sub
FROM analytics_apps a,
     jsonb_each(a.definition::jsonb -> 'categories') AS t,
     jsonb_each(t.value -> 'subcategories') AS s
WHERE a.company = :'company' AND a.name = :'app';

CREATE TEMP TABLE bench_leaf_scores AS
SELECT c.id, l.top, l.sub,
       CASE WHEN pg_temp.h(c.i, 10 + l.k) % 100 < 5 + 10 * l.k THEN 1 + pg_temp.h(c.i, 20 + l.k) % 4 ELSE 0 END
           AS score
FROM bench_calls c CROSS JOIN bench_leaves l;

-- Bottom up (docs/scoring.md, Scores of one call): a leaf hits when it scored above 0 and covers its hit;
-- a parent sums its children's scores, hits when one of them hit and covers the mean of their hits.
CREATE TEMP TABLE bench_top_scores AS
SELECT id, top, sum(score)::bigint AS score, max((score > 0)::int) AS hit, avg((score > 0)::int) AS coverage
FROM bench_leaf_scores GROUP BY id, top;

INSERT INTO analytics_call_scores (call_id, app, category, score, hit, coverage)
SELECT id, :'app', category, score, hit, coverage FROM (
    SELECT id, top || '.' || sub AS category, score, (score > 0)::int AS hit,
           (score > 0)::int::double precision AS coverage
    FROM bench_leaf_scores
    UNION ALL
    SELECT id, top, score, hit, coverage FROM bench_top_scores
    UNION ALL
    SELECT id, '', sum(score)::bigint, max(hit), avg(hit) FROM bench_top_scores GROUP BY id
) AS s ORDER BY id, category;

-- The rollups, summed from the rows above as the worker adds each call.
INSERT INTO analytics_daily_agents
SELECT company, organization, folder, day, agent_id, count(*), sum(duration), sum(silence), sum(words),
       sum(agent_talk), sum(client_talk),
       count(*) FILTER (WHERE agent_emotion = 'positive'), count(*) FILTER (WHERE agent_emotion = 'negative'),
       count(*) FILTER (WHERE agent_emotion = 'improving'), count(*) FILTER (WHERE agent_emotion = 'worsening'),
       count(*) FILTER (WHERE client_emotion = 'positive'), count(*) FILTER (WHERE client_emotion = 'negative'),
       count(*) FILTER (WHERE client_emotion = 'improving'), count(*) FILTER (WHERE client_emotion = 'worsening')
FROM analytics_call_facts
WHERE company = :'company' AND organization = :'org' AND folder = :'folder'
GROUP BY company, organization, folder, day, agent_id;

-- The category rollup: per agent's day one value packing every category's sums
-- (crates/analytics-store/src/scorecards.rs): version 1, then per category in byte order the length of
-- its path, the path, and its six sums, big-endian as int4send, int8send and float8send give them.
INSERT INTO analytics_daily_scorecards
SELECT company, organization, folder, app, day, agent_id,
       '\x01'::bytea || string_agg(
           int4send(octet_length(category)) || convert_to(category, 'UTF8') || int8send(calls)
           || int8send(hits) || float8send(coverage) || int8send(score) || float8send(duration)
           || float8send(silence),
           ''::bytea ORDER BY category COLLATE "C")
FROM (
    SELECT f.company, f.organization, f.folder, s.app, f.day, f.agent_id, s.category, count(*) AS calls,
           sum(s.hit)::bigint AS hits, sum(s.coverage) AS coverage, sum(s.score)::bigint AS score,
           sum(f.duration) AS duration, sum(f.silence) AS silence
    FROM analytics_call_facts f JOIN analytics_call_scores s ON s.call_id = f.call_id
    WHERE f.company = :'company' AND f.organization = :'org' AND f.folder = :'folder' AND s.app = :'app'
    GROUP BY f.company, f.organization, f.folder, s.app, f.day, f.agent_id, s.category
) AS c
GROUP BY company, organization, folder, app, day, agent_id;

DROP TABLE bench_calls, bench_leaves, bench_leaf_scores, bench_top_scores;
