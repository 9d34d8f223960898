"""The Lua scripts behind the enrichment queue (``queue.py``, which describes the keys).

Each changes the stream, the lanes and the tenants' counts in one step, so the counts
always match what the streams and lanes hold. ``REFILL`` is a function the add, settle
and unstick scripts share, not a script of its own.
"""

from __future__ import annotations

# Lua: moves a tenant's lane jobs onto the stream while its placed items leave room for
# them (a job larger than the share goes alone), and keeps the lane's score and the
# counts right. Shared by the add, settle and unstick scripts; ``lane`` is its key.
REFILL = """
local function refill(stream, placed_key, lanes, lanes_n, lane, tenant, cap)
  local placed = tonumber(redis.call('HGET', placed_key, tenant) or '0')
  if placed < 0 then placed = 0 end
  while true do
    local head = redis.call('LINDEX', lane, 0)
    if not head then break end
    local job = cjson.decode(head)
    if placed > 0 and placed + job.n > cap then break end
    redis.call('LPOP', lane)
    redis.call('XADD', stream, '*', unpack(job.f))
    redis.call('DECR', lanes_n)
    placed = placed + job.n
  end
  if placed > 0 then
    redis.call('HSET', placed_key, tenant, placed)
  else
    redis.call('HDEL', placed_key, tenant)
  end
  local head = redis.call('LINDEX', lane, 0)
  if head then
    redis.call('ZADD', lanes, cjson.decode(head).q, tenant)
  else
    redis.call('ZREM', lanes, tenant)
  end
end
"""


# KEYS: stream, waiting counts, parked counts, parked stream, placed counts, lanes, lanes
#       count, then the lane of each tenant named at the end of ARGV
# ARGV: group, ack | retry | park, share, n, n field/value pairs of the replacement entry,
#       j, (entry, tenant, items, placed items) for each of the j jobs, then the tenants
#       whose lanes may move up
SETTLE = (
    REFILL
    + """
local mode, cap, nf = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local fields = {}
for i = 1, nf * 2 do fields[i] = ARGV[4 + i] end
local first = 6 + nf * 2
local last = first + tonumber(ARGV[5 + nf * 2]) * 4 - 1
for i = first, last, 4 do
  local entry, tenant, n, p = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  if redis.call('XACK', KEYS[1], ARGV[1], entry) == 1 then
    redis.call('XDEL', KEYS[1], entry)
    if mode == 'retry' then
      redis.call('XADD', KEYS[1], '*', unpack(fields))
    else
      if tenant ~= '' and n > 0 and redis.call('HINCRBY', KEYS[2], tenant, -n) < 0 then
        redis.call('HSET', KEYS[2], tenant, 0)  -- never below 0, whatever happened before
      end
      if tenant ~= '' and p > 0 then redis.call('HINCRBY', KEYS[5], tenant, -p) end
      if mode == 'park' then
        redis.call('XADD', KEYS[4], '*', unpack(fields))
        if tenant ~= '' and n > 0 then redis.call('HINCRBY', KEYS[3], tenant, n) end
      end
    end
  end
end
for i = last + 1, #ARGV do
  refill(KEYS[1], KEYS[5], KEYS[6], KEYS[7], KEYS[8 + i - last - 1], ARGV[i], cap)
end
return 0
"""
)


# KEYS: stream, waiting counts, placed counts, lanes, lanes count, the tenant's lane
# ARGV: tenant, items, share, the entry's field/value pairs (placed: ``p`` is 1)
ADD = (
    REFILL
    + """
local tenant, n, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('HINCRBY', KEYS[2], tenant, n) < n then
  redis.call('HSET', KEYS[2], tenant, n)  -- a count left below 0 (see SETTLE) starts over
end
local placed = tonumber(redis.call('HGET', KEYS[3], tenant) or '0')
if redis.call('LLEN', KEYS[6]) == 0 and (placed <= 0 or placed + n <= cap) then
  redis.call('XADD', KEYS[1], '*', unpack(ARGV, 4))
  if placed < 0 then redis.call('HSET', KEYS[3], tenant, 0) end
  redis.call('HINCRBY', KEYS[3], tenant, n)
  return 1
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
fields[#fields + 1] = 'q'
fields[#fields + 1] = tostring(now)
redis.call('RPUSH', KEYS[6], cjson.encode({n = n, q = now, f = fields}))
redis.call('ZADD', KEYS[4], 'NX', now, tenant)
redis.call('INCR', KEYS[5])
-- a lane with nothing of its tenant on the stream (counts lost) moves up now
if placed <= 0 then refill(KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6], tenant, cap) end
return 0
"""
)

# KEYS: stream, placed counts, lanes, lanes count, the lane of each tenant in ARGV
# ARGV: share, the tenants
# With no job on the stream at all, no tenant has items there: counts that say otherwise
# (the stream was deleted or trimmed by hand) would keep their lanes waiting for good.
UNSTICK = (
    REFILL
    + """
if redis.call('XLEN', KEYS[1]) > 0 then return 0 end
for i = 2, #ARGV do
  redis.call('HDEL', KEYS[2], ARGV[i])
  refill(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[3 + i], ARGV[i], tonumber(ARGV[1]))
end
return #ARGV - 1
"""
)

# KEYS: stream   ARGV: group, consumer, entries
# Resets the idle time of the entries this consumer still holds (JUSTID: the delivery
# count stays), and leaves alone those another consumer took over meanwhile.
TOUCH = """
local touched = 0
for i = 3, #ARGV do
  local held = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
  if #held > 0 then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    touched = touched + 1
  end
end
return touched
"""

# KEYS: workers   ARGV: consumer, 1 (alive) | 0 (stopping)
BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 3600000)
return 0
"""

# KEYS: workers   ARGV: within ms
WORKERS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], now - tonumber(ARGV[1]), '+inf')
"""
