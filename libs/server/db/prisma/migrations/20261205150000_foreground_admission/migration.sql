-- Foreground admission (libs/server/db-runs/src/foreground-limits.ts) takes its advisory locks and
-- counts what is active in one call, so a start can be admitted and written in one statement (one
-- round trip, a prepared plan). The count is the function's own query: in a volatile function each
-- query takes a new snapshot, taken here after the locks are held, so it sees every admission
-- committed before them (the calling statement's snapshot, taken before the wait, would not).
--
-- owners: the owners of the starts (repeats allowed); one row per distinct owner. The owners' locks
-- (key 0x53590f01, per owner) are taken in one order, then the deployment's (0x53590f02), so two
-- admissions never wait on each other in a circle. Counted: runs a replica drives or is about to,
-- started by people (a task's run is admitted by the scheduler's fair queue), and open chat turns.
CREATE FUNCTION "foreground_active"(owners text[], owner_limited boolean, deployment_limited boolean)
RETURNS TABLE (active_owner text, owner_active bigint, deployment_active bigint)
LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
BEGIN
  IF owner_limited THEN
    PERFORM pg_advisory_xact_lock(1398345473, hashtext(s.o))
    FROM (SELECT DISTINCT u COLLATE "C" AS o FROM unnest(owners) AS u ORDER BY 1) AS s;
  END IF;
  IF deployment_limited THEN
    PERFORM pg_advisory_xact_lock(1398345474, 0);
  END IF;
  RETURN QUERY
    SELECT s.o,
           (SELECT count(*) FROM run r
             WHERE r.owner_id = s.o::uuid AND NOT r.background
               AND r.status IN ('planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval'))
         + (SELECT count(*) FROM chat_session c
             WHERE c.owner_id = s.o::uuid AND c.status IN ('running', 'awaiting_approval')),
           CASE WHEN deployment_limited THEN
             (SELECT count(*) FROM run r
               WHERE NOT r.background
                 AND r.status IN ('planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval'))
           + (SELECT count(*) FROM chat_session c WHERE c.status IN ('running', 'awaiting_approval'))
           ELSE 0 END
    FROM (SELECT DISTINCT u AS o FROM unnest(owners) AS u) AS s;
END $$;
