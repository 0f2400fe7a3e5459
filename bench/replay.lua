-- wrk script: send the paths of a URL list (one per line, the file named
-- after wrk's `--`) in order, wrapping around, with wrk's own headers.
-- bench/realistic.py writes the list and runs wrk with one thread, so the
-- list is sent once in order across all of that thread's connections.
-- A line "HOST PATH" (bench/growth.py's virtual hosts) is sent with that
-- Host header.

local requests = {}
local next_index = 1

function init(args)
  local file = assert(io.open(args[1], "r"), "no URL list: wrk ... -- FILE")
  for line in file:lines() do
    local host, path = line:match("^(%S+) (%S+)$")
    if host then
      requests[#requests + 1] = wrk.format("GET", path, { Host = host })
    else
      requests[#requests + 1] = wrk.format("GET", line)
    end
  end
  file:close()
  assert(#requests > 0, "empty URL list")
end

function request()
  local r = requests[next_index]
  next_index = next_index + 1
  if next_index > #requests then
    next_index = 1
  end
  return r
end
