import { LuaScript } from './lua-script';

/*
 * Key layout, every key under the caller's prefix P:
 *
 *   P init                     string  set by rebuild(); missing after a flush
 *   P ring                     list    owners with at least one waiting task, in turn order
 *   P owners                   set     owners with waiting or running tasks (active owners)
 *   P running                  set     ids of running tasks (all owners)
 *   P wait:<priority>          zset    waiting task ids of one class, all owners, scored by enqueuedAtMs
 *   P q:<priority>:<owner>     list    one owner's waiting task ids of one class, FIFO
 *   P o:<owner>                hash    running (count), pos (next slot in the weighted cycle)
 *   P t:<taskId>               hash    o (owner), p (priority), e (enqueuedAtMs), s (queued | running)
 *
 * Invariants every script keeps: an owner is in `ring` exactly when one of its q: lists is non-empty,
 * and appears there once; a task id is in exactly one of `running` or one q: list (and its wait: zset);
 * `o:<owner>` and the `owners` entry exist while the owner has waiting or running work.
 */
const PRELUDE = `
local P = ARGV[1]
local PRIORITIES = { 'interactive', 'normal', 'batch' }
local CYCLE_CLASS = { i = 'interactive', n = 'normal', b = 'batch' }
local function qkey(priority, owner) return P .. 'q:' .. priority .. ':' .. owner end
local function okey(owner) return P .. 'o:' .. owner end
local function tkey(id) return P .. 't:' .. id end
local function wkey(priority) return P .. 'wait:' .. priority end
local function waitingOf(owner)
  return redis.call('LLEN', qkey('interactive', owner)) + redis.call('LLEN', qkey('normal', owner))
    + redis.call('LLEN', qkey('batch', owner))
end
local function runningOf(owner)
  return tonumber(redis.call('HGET', okey(owner), 'running') or '0')
end
local function waitingAll()
  return redis.call('ZCARD', wkey('interactive')) + redis.call('ZCARD', wkey('normal'))
    + redis.call('ZCARD', wkey('batch'))
end
-- Holds a running slot for a task the queue does not hold (no limit is checked here).
local function markRunning(id, owner, priority, enqueuedAt)
  redis.call('HSET', tkey(id), 'o', owner, 'p', priority, 'e', enqueuedAt, 's', 'running')
  redis.call('SADD', P .. 'running', id)
  redis.call('HINCRBY', okey(owner), 'running', 1)
  redis.call('SADD', P .. 'owners', owner)
end
-- Tasks come four arguments each from ARGV[from] on (id, owner, priority, enqueuedAt): an error reply
-- naming the first unknown priority, before anything is changed; nil when all are known.
local function badPriority(from)
  for i = from, #ARGV, 4 do
    local priority = ARGV[i + 2]
    if CYCLE_CLASS[string.sub(priority, 1, 1)] ~= priority then
      return redis.error_reply('ERR unknown priority ' .. priority)
    end
  end
end
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- An owner with nothing waiting or running leaves no key behind (its cycle position starts over).
local function releaseIfIdle(owner)
  if waitingOf(owner) == 0 and runningOf(owner) <= 0 then
    redis.call('DEL', okey(owner))
    redis.call('SREM', P .. 'owners', owner)
  end
end
-- Frees a running task's slot and forgets it; a task not running (waiting, unknown) is left alone.
local function freeRunning(id)
  if redis.call('HGET', tkey(id), 's') ~= 'running' then return 0 end
  local owner = redis.call('HGET', tkey(id), 'o')
  redis.call('SREM', P .. 'running', id)
  redis.call('DEL', tkey(id))
  redis.call('HINCRBY', okey(owner), 'running', -1)
  releaseIfIdle(owner)
  return 1
end
`;

/**
 * ARGV: prefix, ownerQueue, globalQueue, batchOwner, batchGlobal, nonInteractiveOwner,
 * nonInteractiveGlobal, running limit, then four per task: taskId, ownerId, priority, enqueuedAtMs.
 * Returns, per task in order, {'ok'} or {scope, priority or '', waiting, name of the limit}: the
 * same as admitting them one after the other; then the number of free running slots (whether a
 * dispatch now could start anything).
 */
export const admitScript = new LuaScript(
  'fair-queue-admit',
  `${PRELUDE}
local ownerQueue, globalQueue = tonumber(ARGV[2]), tonumber(ARGV[3])
local batchOwner, batchGlobal = tonumber(ARGV[4]), tonumber(ARGV[5])
local nonInteractiveOwner, nonInteractiveGlobal = tonumber(ARGV[6]), tonumber(ARGV[7])
local runningLimit = tonumber(ARGV[8])
local bad = badPriority(9)
if bad then return bad end
local function admitOne(id, owner, priority, enqueuedAt)
  -- The same task admitted twice (a producer retrying) is accepted once.
  if redis.call('EXISTS', tkey(id)) == 1 then return { 'ok' } end

  local ownerBatch = redis.call('LLEN', qkey('batch', owner))
  local ownerNormal = redis.call('LLEN', qkey('normal', owner))
  local ownerWaiting = ownerBatch + ownerNormal + redis.call('LLEN', qkey('interactive', owner))
  local globalBatch = redis.call('ZCARD', wkey('batch'))
  local globalNormal = redis.call('ZCARD', wkey('normal'))
  local globalWaiting = globalBatch + globalNormal + redis.call('ZCARD', wkey('interactive'))

  if ownerWaiting >= ownerQueue then return { 'owner', '', ownerWaiting, 'ownerQueue' } end
  if globalWaiting >= globalQueue then return { 'global', '', globalWaiting, 'globalQueue' } end
  if priority == 'batch' then
    if ownerBatch >= batchOwner then return { 'owner-priority', 'batch', ownerBatch, 'batchOwner' } end
    if globalBatch >= batchGlobal then return { 'global-priority', 'batch', globalBatch, 'batchGlobal' } end
  end
  if priority ~= 'interactive' then
    local ownerNonInteractive = ownerBatch + ownerNormal
    if ownerNonInteractive >= nonInteractiveOwner then
      return { 'owner-priority', priority, ownerNonInteractive, 'nonInteractiveOwner' }
    end
    local globalNonInteractive = globalBatch + globalNormal
    if globalNonInteractive >= nonInteractiveGlobal then
      return { 'global-priority', priority, globalNonInteractive, 'nonInteractiveGlobal' }
    end
  end

  redis.call('HSET', tkey(id), 'o', owner, 'p', priority, 'e', enqueuedAt, 's', 'queued')
  redis.call('RPUSH', qkey(priority, owner), id)
  redis.call('ZADD', wkey(priority), enqueuedAt, id)
  if ownerWaiting == 0 then redis.call('RPUSH', P .. 'ring', owner) end
  redis.call('SADD', P .. 'owners', owner)
  return { 'ok' }
end
local replies = {}
for i = 9, #ARGV, 4 do
  table.insert(replies, admitOne(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]))
end
table.insert(replies, math.max(0, runningLimit - redis.call('SCARD', P .. 'running')))
return replies
`,
);

/**
 * ARGV: prefix, running limit, cycle (one letter per slot: i, n, b), most tasks to take (1 if absent),
 * '1' to take nothing unless the state was built (rebuild's marker), then ids of running tasks to
 * finish first (their slots freed as `finish` does: a task ended and its successors start in one call).
 * Returns {taskId, ownerId, priority, enqueuedAtMs, ...} for each task taken, in dispatch order (none
 * when all slots are busy or nothing waits), then how many tasks still wait; {'uninitialised'} when
 * the marker was asked for and is gone.
 *
 * The owner at the head of the ring takes the turn. Its cycle position says which class is due; a class
 * with nothing waiting is skipped to the next slot (at most one lap), so the owner's turn is never
 * wasted. The owner goes to the back of the ring if it still has work waiting. Taking several tasks
 * is taking one after the other: the same turns as as many calls.
 */
export const nextScript = new LuaScript(
  'fair-queue-next',
  `${PRELUDE}
local runningLimit, cycle = tonumber(ARGV[2]), ARGV[3]
local most = tonumber(ARGV[4] or '1')
for i = 6, #ARGV do freeRunning(ARGV[i]) end
-- Asked to: nothing is dispatched while the queue state is lost (see isInitialised).
if ARGV[5] == '1' and redis.call('EXISTS', P .. 'init') == 0 then return { 'uninitialised' } end
local slots = #cycle
local function takeOne()
  if redis.call('SCARD', P .. 'running') >= runningLimit then return nil end
  -- One pass in the normal case; the bound only guards against a ring entry that broke the invariant.
  for _ = 1, redis.call('LLEN', P .. 'ring') do
    local owner = redis.call('LPOP', P .. 'ring')
    if not owner then return nil end
    local pos = tonumber(redis.call('HGET', okey(owner), 'pos') or '0') % slots
    for step = 0, slots - 1 do
      local slot = (pos + step) % slots
      local priority = CYCLE_CLASS[string.sub(cycle, slot + 1, slot + 1)]
      local id = redis.call('LPOP', qkey(priority, owner))
      if id then
        redis.call('HSET', okey(owner), 'pos', (slot + 1) % slots)
        redis.call('HINCRBY', okey(owner), 'running', 1)
        if waitingOf(owner) > 0 then redis.call('RPUSH', P .. 'ring', owner) end
        redis.call('ZREM', wkey(priority), id)
        redis.call('SADD', P .. 'running', id)
        redis.call('HSET', tkey(id), 's', 'running')
        return { id, owner, priority, redis.call('HGET', tkey(id), 'e') }
      end
    end
    releaseIfIdle(owner)
  end
  return nil
end
local taken = {}
for _ = 1, most do
  local one = takeOne()
  if not one then break end
  for _, v in ipairs(one) do table.insert(taken, v) end
end
table.insert(taken, waitingAll())
return taken
`,
);

/**
 * ARGV: prefix, running limit, then four per task: taskId, ownerId, priority, startedAtMs.
 * Starts each task at once, marked running as `next` marks it, when the state was built (rebuild's
 * marker), nothing waits in any class and a running slot is free; else leaves it alone (the caller
 * admits it). A waiting task is never overtaken. Queue limits bind only waiting work, so none
 * applies. The task's hash also keeps `a`: when its slot was taken, by Redis's clock. Returns, per
 * task in order, 1 (started) or 0.
 */
export const startScript = new LuaScript(
  'fair-queue-start',
  `${PRELUDE}
local runningLimit = tonumber(ARGV[2])
local bad = badPriority(3)
if bad then return bad end
local open = redis.call('EXISTS', P .. 'init') == 1 and waitingAll() == 0
local now = nowMs()
local replies = {}
for i = 3, #ARGV, 4 do
  local id, owner, priority, startedAt = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if open and redis.call('SCARD', P .. 'running') < runningLimit and redis.call('EXISTS', tkey(id)) == 0 then
    markRunning(id, owner, priority, startedAt)
    -- When the slot was taken, by Redis's clock: see finishRowlessScript.
    redis.call('HSET', tkey(id), 'a', now)
    table.insert(replies, 1)
  else
    table.insert(replies, 0)
  end
end
return replies
`,
);

/**
 * ARGV: prefix, then four per task: taskId, ownerId, priority, enqueuedAtMs. Holds a running slot for
 * each task the queue does not hold at all (its store says it runs: a slot lost to a rebuild or freed
 * while its row was still being written); no limit is checked, the task runs already. Returns how
 * many slots it took.
 */
export const holdScript = new LuaScript(
  'fair-queue-hold',
  `${PRELUDE}
local bad = badPriority(2)
if bad then return bad end
local held = 0
for i = 2, #ARGV, 4 do
  if redis.call('EXISTS', tkey(ARGV[i])) == 0 then
    markRunning(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3])
    held = held + 1
  end
end
return held
`,
);

/**
 * ARGV: prefix, guard ms, then ids of running tasks their store no longer holds. Frees their slots as
 * `finish` does, except a slot taken at once (`a`, see startScript) less than the guard ago, by
 * Redis's clock: its row may still be on its way. Returns how many slots it freed.
 */
export const finishRowlessScript = new LuaScript(
  'fair-queue-finish-rowless',
  `${PRELUDE}
local since = nowMs() - tonumber(ARGV[2])
local freed = 0
for i = 3, #ARGV do
  local taken = redis.call('HGET', tkey(ARGV[i]), 'a')
  if not taken or tonumber(taken) < since then freed = freed + freeRunning(ARGV[i]) end
end
return freed
`,
);

/** ARGV: prefix, taskId, .... Returns how many of the tasks were running (their slots are now free). */
export const finishScript = new LuaScript(
  'fair-queue-finish',
  `${PRELUDE}
local freed = 0
for i = 2, #ARGV do freed = freed + freeRunning(ARGV[i]) end
return freed
`,
);

/** ARGV: prefix, taskId. Returns 1 if the task was waiting (now gone, its queue slot free), else 0. */
export const removeScript = new LuaScript(
  'fair-queue-remove',
  `${PRELUDE}
local id = ARGV[2]
if redis.call('HGET', tkey(id), 's') ~= 'queued' then return 0 end
local owner = redis.call('HGET', tkey(id), 'o')
local priority = redis.call('HGET', tkey(id), 'p')
redis.call('LREM', qkey(priority, owner), 0, id)
redis.call('ZREM', wkey(priority), id)
redis.call('DEL', tkey(id))
-- The ring holds only owners with work waiting (at most one entry per owner, so LREM stays short).
if waitingOf(owner) == 0 then
  redis.call('LREM', P .. 'ring', 0, owner)
  releaseIfIdle(owner)
end
return 1
`,
);

/**
 * ARGV: prefix, ownerId or ''.
 * Returns {running, waiting i/n/b, oldest enqueuedAtMs i/n/b ('' when none), activeOwners,
 *          owner waiting i/n/b, owner running}.
 */
export const capacityScript = new LuaScript(
  'fair-queue-capacity',
  `${PRELUDE}
local owner = ARGV[2]
local reply = { redis.call('SCARD', P .. 'running') }
for _, priority in ipairs(PRIORITIES) do table.insert(reply, redis.call('ZCARD', wkey(priority))) end
for _, priority in ipairs(PRIORITIES) do
  local oldest = redis.call('ZRANGE', wkey(priority), 0, 0, 'WITHSCORES')
  table.insert(reply, oldest[2] or '')
end
table.insert(reply, redis.call('SCARD', P .. 'owners'))
if owner ~= '' then
  for _, priority in ipairs(PRIORITIES) do table.insert(reply, redis.call('LLEN', qkey(priority, owner))) end
  table.insert(reply, runningOf(owner))
end
return reply
`,
);

/**
 * ARGV: prefix, then five per task: taskId, ownerId, priority, enqueuedAtMs, '1' if running else '0';
 * waiting tasks in FIFO order. Drops all state under the prefix first. Limits are not checked: the
 * source of truth already accepted these tasks. The ring starts with the owner of the oldest waiting task.
 */
export const rebuildScript = new LuaScript(
  'fair-queue-rebuild',
  `${PRELUDE}
local function dropOwner(owner)
  redis.call('DEL', okey(owner))
  for _, priority in ipairs(PRIORITIES) do redis.call('DEL', qkey(priority, owner)) end
end
for _, owner in ipairs(redis.call('SMEMBERS', P .. 'owners')) do dropOwner(owner) end
for _, owner in ipairs(redis.call('LRANGE', P .. 'ring', 0, -1)) do dropOwner(owner) end
for _, priority in ipairs(PRIORITIES) do
  for _, id in ipairs(redis.call('ZRANGE', wkey(priority), 0, -1)) do redis.call('DEL', tkey(id)) end
end
for _, id in ipairs(redis.call('SMEMBERS', P .. 'running')) do redis.call('DEL', tkey(id)) end
redis.call('DEL', P .. 'ring', P .. 'owners', P .. 'running', wkey('interactive'), wkey('normal'),
  wkey('batch'))

local inRing = {}
for i = 2, #ARGV, 5 do
  local id, owner, priority, enqueuedAt, running = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if redis.call('EXISTS', tkey(id)) == 0 then
    redis.call('SADD', P .. 'owners', owner)
    if running == '1' then
      markRunning(id, owner, priority, enqueuedAt)
    else
      redis.call('HSET', tkey(id), 'o', owner, 'p', priority, 'e', enqueuedAt, 's', 'queued')
      redis.call('RPUSH', qkey(priority, owner), id)
      redis.call('ZADD', wkey(priority), enqueuedAt, id)
      if not inRing[owner] then
        inRing[owner] = true
        redis.call('RPUSH', P .. 'ring', owner)
      end
    end
  end
end
redis.call('SET', P .. 'init', '1')
return 1
`,
);
