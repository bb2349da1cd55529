package redisstore

import "github.com/redis/go-redis/v9"

// The scripts keep a bucket in one hash, KEYS[1], with two fields in
// microseconds of Redis time (TIME): tat, the theoretical arrival time of GCRA
// (the instant the bucket is full again; tokens(now) = burst - (tat-now)/interval,
// at most burst), and hold, the instant before which nothing is admitted. A
// missing hash or field is a full, free bucket.
//
// Numbers are Lua doubles. Microseconds since 1970 (about 1.8e15) are exact
// integers in a double, and a difference of two such instants is computed
// exactly; the stored fields are written with %.17g so that nothing is lost on
// the way through Redis. What a double cannot hold is an interval far below
// its spacing near 1.8e15 (0.25µs): a rate above a few million tokens per
// second is not counted, that is, it admits everything, as rate.Inf does.
//
// Reading TIME before writing needs script effects replication, the only
// mode since Redis 5, switched on with redis.replicate_commands() on Redis
// 3.2 to 4; the call is skipped where the function no longer exists.
//
// Both scripts return microseconds as integers, capped at maxWaitMicros so
// that the conversion to a Redis integer, and then to a time.Duration, cannot
// overflow.

// takeScript takes ARGV[1] tokens (n) from the bucket, whose interval between
// tokens is ARGV[2] µs (0: no limit, only the hold counts) and whose capacity
// is ARGV[3] tokens, if they are there and the bucket is not held. It returns
// 0 when it took them, otherwise the µs until they are there and the hold is
// over (at least 1), having changed nothing.
var takeScript = redis.NewScript(takeSrc)

const takeSrc = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n, iv, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'tat', 'hold')
local tat, hold = tonumber(s[1]) or now, tonumber(s[2]) or 0

local next = math.max(tat, now) + n * iv
local due = hold
if iv > 0 then due = math.max(due, next - burst * iv) end
if due > now then
	return math.min(math.ceil(due - now), ` + maxWaitMicrosLua + `)
end
-- A take that leaves the bucket full (no limit, or an interval too small
-- to count) changes nothing worth writing.
if next > now and next > tat then
	redis.call('HSET', KEYS[1], 'tat', string.format('%.17g', next))
	local ttl = math.min(math.ceil((math.max(next, hold) - now) / 1000), ` + maxTTLMillisLua + `)
	redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl + ` + expiryMarginMillisLua + `))
end
return 0
`

// correctScript applies a correction to the bucket whose interval is ARGV[1]
// µs (0: no limit) and capacity ARGV[2] tokens. ARGV[3] 1 lowers the tokens
// to at most ARGV[4]; 0 leaves them alone. ARGV[5], if positive, holds the bucket for that many
// µs from now, unless it is already held longer. It returns 0.
var correctScript = redis.NewScript(correctSrc)

const correctSrc = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local iv, burst, lower = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens, hold_for = tonumber(ARGV[4]), tonumber(ARGV[5])
local s = redis.call('HMGET', KEYS[1], 'tat', 'hold')
local tat, hold = tonumber(s[1]) or now, tonumber(s[2]) or 0

if lower == 1 and iv > 0 then
	tat = math.max(tat, now + (burst - math.min(tokens, burst)) * iv)
end
if hold_for > 0 then hold = math.max(hold, now + hold_for) end

redis.call('HSET', KEYS[1], 'tat', string.format('%.17g', tat), 'hold', string.format('%.17g', hold))
local ttl = math.min(math.ceil(math.max(tat - now, hold - now, 0) / 1000), ` + maxTTLMillisLua + `)
redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl + ` + expiryMarginMillisLua + `))
return 0
`

// Limits shared by the scripts and the Go code, as Lua literals.
const (
	// maxWaitMicros caps a reported wait (about 285 years): µs·1000 still
	// fits in a time.Duration.
	maxWaitMicros    = 9e15
	maxWaitMicrosLua = "9e15"
	// maxTTLMillisLua caps an expiry (about 317 years), far below where
	// PEXPIRE overflows.
	maxTTLMillisLua = "1e13"
	// expiryMarginMillisLua keeps a bucket a second past the instant it is
	// full and free again; a vanished bucket reads as full, so the margin only
	// spares a recreation at the boundary.
	expiryMarginMillisLua = "1000"
)
