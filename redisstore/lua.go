package redisstore

import "github.com/redis/go-redis/v9"

// The scripts keep a bucket in one hash, KEYS[1], with the fields tokens, the
// count the bucket held at the instant at; hold, the instant before which
// nothing is admitted after a refusal; and spent, the instant before which
// nothing is admitted because the server said nothing is left, set at spent_at:
// all instants in microseconds of Redis time (TIME). A caller whose interval
// between tokens is iv reads tokens(now) = min(burst, tokens + max(now-at, 0)/iv):
// the count is refilled at the caller's own rate from the last change, so a
// correction reads as the same count to every process at the instant it is
// made, whatever rate each process paces at. (A single instant, GCRA's "full
// again at", would read as burst - (tat-now)/iv: a different count at each
// rate.) A missing hash or field is a full, free bucket.
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
// the holds, into now, have (the tokens now), from (when they refill from),
// hold, spent and spent_at. The instant at may be ahead of now: a held
// bucket does not refill until its holds end. A bucket written by a version of this package that kept only
// tat, the instant it is full again, is read from that.
const readSrc = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'hold', 'tat', 'spent', 'spent_at')
local hold, spent, spent_at = tonumber(s[3]) or 0, tonumber(s[5]) or 0, tonumber(s[6]) or 0
local have, from = burst, now
if iv > 0 and s[1] then
	from = math.max(now, tonumber(s[2]))
	have = math.min(burst, tonumber(s[1]) + math.max(now - tonumber(s[2]), 0) / iv)
elseif iv > 0 and s[4] then
	have = math.min(burst, burst - (tonumber(s[4]) - now) / iv)
end
`

// writeSrc stores the tokens left (have) and the holds, for a caller with a
// limit (iv > 0). The tokens refill from the end of the holds: a bucket held
// (a refusal's cooldown, or nothing left until a reset) that went on filling
// would let its processes spend what it filled at once when the hold ends,
// and on a sliding window that gives back little at a time, draw a 429 and
// another hold (httprate's counter, four processes: a burst of four at each
// window's turn, a 429, and 3 s held). The hash expires once the bucket would
// be full again at this caller's rate.
const writeSrc = `
local at = math.max(now, hold, spent)
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', have), 'at', string.format('%.17g', at),
	'hold', string.format('%.17g', hold), 'spent', string.format('%.17g', spent), 'spent_at', string.format('%.17g', spent_at))
redis.call('HDEL', KEYS[1], 'tat')
local ttl = math.min(math.ceil(math.max(at - now + (burst - have) * iv, 0) / 1000), ` + maxTTLMillisLua + `)
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
local wait = math.max(hold - now, spent - now, 0)
if have < n then wait = math.max(wait, from - now + (n - have) * iv) end
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
// µs (0: no limit, or none known) and capacity ARGV[2] tokens. ARGV[3] 1
// lowers the tokens to at most ARGV[4]; 0 leaves them alone.
// ARGV[5], if positive, holds the bucket for that many µs from now, unless
// it is already held longer. ARGV[6] is the spent hold in µs from now and
// ARGV[7] how many µs ago the answered request was sent (0: not known, or
// the correction sets no tokens): sent after the spent hold in place was
// set, it replaces that hold (0 ends it); otherwise it only lengthens it. It
// returns 0.
var correctScript = redis.NewScript(correctSrc)

const correctSrc = `
local iv, burst, lower = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens, hold_for = tonumber(ARGV[4]), tonumber(ARGV[5])
local spent_for, sent_ago = tonumber(ARGV[6]), tonumber(ARGV[7])
` + readSrc + `
if hold_for > 0 then hold = math.max(hold, now + hold_for) end
if sent_ago > 0 and now - sent_ago > spent_at then
	spent, spent_at = now + spent_for, now
elseif spent_for > 0 and now + spent_for > spent then
	spent, spent_at = now + spent_for, now
end
if iv > 0 then
	if lower == 1 then have = math.min(have, tokens) end
` + writeSrc + `
else
	-- From a caller with no limit: the tokens stay as they are, and refill
	-- at each caller's rate, but no later than the holds' end: a spent hold
	-- ended early frees the refill it had put off.
	redis.call('HSET', KEYS[1], 'hold', string.format('%.17g', hold),
		'spent', string.format('%.17g', spent), 'spent_at', string.format('%.17g', spent_at))
	local held = math.max(now, hold, spent)
	if s[2] and tonumber(s[2]) > held then
		redis.call('HSET', KEYS[1], 'at', string.format('%.17g', held))
	end
	local ttl = math.min(math.ceil(math.max(hold - now, spent - now) / 1000) + ` + expiryMarginMillisLua + `, ` + maxTTLMillisLua + `)
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
