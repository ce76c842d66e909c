-- Argo CD health of a BenchmarkResult (bench.tpcc.dev): the immutable record of one finished
-- run, its verdict in spec.verdict. Healthy for Pass, Improved and Inconclusive (nothing to
-- compare with is no failure), Degraded for Regressed and Failed. Lua 5.1 (Argo CD's
-- gopher-lua) and 5.4 alike.
local hs = {}
local record = obj.spec or {}
local verdict = record.verdict
local why = ""
if record.regression ~= nil and record.regression.message ~= nil then
  why = ": " .. record.regression.message
end
if verdict == "Failed" and record.reason ~= nil then
  why = ": " .. record.reason
end
if verdict == "Regressed" or verdict == "Failed" then
  hs.status = "Degraded"
  hs.message = verdict .. why
  return hs
end
if verdict == "Pass" or verdict == "Improved" or verdict == "Inconclusive" then
  hs.status = "Healthy"
  hs.message = verdict .. why
  return hs
end
hs.status = "Progressing"
hs.message = "no verdict recorded"
return hs
