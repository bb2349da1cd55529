package redisstore

import "github.com/redis/go-redis/v9"

// The scripts keep a bucket in one hash, KEYS[1], with three fields: tokens,
// the count the bucket held at the instant at, and hold, the instant before
// which nothing is admitted, both instants in microseconds of Redis time
// (TIME). A caller whose interval between tokens is iv reads
// tokens(now) = min(burst, tokens + (now-at)/iv): the count is refilled at
// the caller's own rate from the last change, so a correction reads as the
// same count to every process at the instant it is made, whatever rate each
// process paces at. (A single instant, GCRA's "full again at", would read as
// burst - (tat-now)/iv: a different count at each rate.) A missing hash or
// field is a full, free bucket.
//
// Numbers are Lua doubles. Microseconds since 1970 (about 1.8e15) are exact
// integers in a double, and a difference of two such instants is computed
// exactly; the stored fields are written with %.17g so that nothing is lost
// on the way through Redis. TIME resolves a microsecond, so the refill of a
// rate above a million tokens per second comes in steps of a microsecond.
//
// Reading TIME before writing needs script effects replication, the only
// mode since Redis 5, switched on with redis.replicate_commands() on Redis
// 3.2 to 4; the call is skipped where the function no longer exists.
//
// Both scripts return microseconds as integers, capped at maxWaitMicros so
// that the conversion to a Redis integer, and then to a time.Duration, cannot
// overflow.

// readSrc starts both scripts: it reads the time, the bucket whose interval
// between tokens is iv µs (0: no limit, always full) and capacity burst, and
// the hold, into now, have (the tokens now) and hold. A bucket written by a
// version of this package that kept only tat, the instant it is full again,
// is read from that.
const readSrc = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'hold', 'tat')
local hold = tonumber(s[3]) or 0
local have = burst
if iv > 0 and s[1] then
	have = math.min(burst, tonumber(s[1]) + math.max(now - tonumber(s[2]), 0) / iv)
elseif iv > 0 and s[4] then
	have = math.min(burst, burst - (tonumber(s[4]) - now) / iv)
end
`

// writeSrc stores the tokens left (have) at now and the hold, for a caller
// with a limit (iv > 0), and expires the hash once it would be full again at
// this caller's rate and the hold is over.
const writeSrc = `
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', have), 'at', string.format('%.17g', now), 'hold', string.format('%.17g', hold))
redis.call('HDEL', KEYS[1], 'tat')
local ttl = math.min(math.ceil(math.max((burst - have) * iv, hold - now, 0) / 1000), ` + maxTTLMillisLua + `)
redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl + ` + expiryMarginMillisLua + `))
`

// takeScript takes ARGV[1] tokens (n) from the bucket, whose interval between
// tokens is ARGV[2] µs (0: no limit, only the hold counts) and whose capacity
// is ARGV[3] tokens, if they are there and the bucket is not held. It returns
// 0 when it took them, otherwise the µs until they are there and the hold is
// over (at least 1), having changed nothing.
var takeScript = redis.NewScript(takeSrc)

const takeSrc = `
local n, iv, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
` + readSrc + `
local wait = math.max(hold - now, 0)
if have < n then wait = math.max(wait, (n - have) * iv) end
if wait > 0 then
	return math.min(math.ceil(wait), ` + maxWaitMicrosLua + `)
end
-- Without a limit the bucket stays full: nothing worth writing.
if iv == 0 then return 0 end
have = have - n
` + writeSrc + `
return 0
`

// correctScript applies a correction to the bucket whose interval is ARGV[1]
// µs and capacity ARGV[2] tokens. ARGV[3] 1 lowers the tokens to at most
// ARGV[4]; 0 leaves them alone, and the interval and capacity unread.
// ARGV[5], if positive, holds the bucket for that many µs from now, unless it
// is already held longer. It returns 0.
var correctScript = redis.NewScript(correctSrc)

const correctSrc = `
local iv, burst, lower = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens, hold_for = tonumber(ARGV[4]), tonumber(ARGV[5])
` + readSrc + `
if hold_for > 0 then hold = math.max(hold, now + hold_for) end
if lower == 1 then
	have = math.min(have, tokens)
` + writeSrc + `
else
	-- A hold alone: the tokens, and when they are full again at the
	-- rate of whoever wrote them, stay as they are.
	redis.call('HSET', KEYS[1], 'hold', string.format('%.17g', hold))
	local ttl = math.min(math.ceil((hold - now) / 1000) + ` + expiryMarginMillisLua + `, ` + maxTTLMillisLua + `)
	redis.call('PEXPIRE', KEYS[1], string.format('%d', math.max(ttl, redis.call('PTTL', KEYS[1]))))
end
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
