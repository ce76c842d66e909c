-- Argo CD health of a BenchmarkRun (bench.tpcc.dev): Progressing while it runs, Healthy when
-- it passed, Degraded when it failed or its verdict says it regressed. Lua 5.1 (Argo CD's
-- gopher-lua) and 5.4 alike.
local hs = {}

local function condition(status, kind)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

local status = obj.status
local generation = obj.metadata and obj.metadata.generation
if status == nil or status.phase == nil then
  hs.status = "Progressing"
  hs.message = "waiting for the operator to start the run"
  return hs
end
-- a spec edit the operator has not seen yet: the status describes an older spec
if generation ~= nil and status.observedGeneration ~= nil and status.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "generation " .. tostring(generation) .. " not yet observed"
  return hs
end

local stalled = condition(status, "Stalled")
if stalled ~= nil and stalled.status ~= "True" then
  stalled = nil
end
-- Failed, or Succeeded but Regressed under onRegression: Fail (Stalled=True, reason Regressed)
if status.phase == "Failed" then
  hs.status = "Degraded"
  hs.message = (status.reason or "Failed") .. ": " .. (status.message or "")
  return hs
end
if stalled ~= nil then
  hs.status = "Degraded"
  hs.message = (stalled.reason or "Stalled") .. ": " .. (stalled.message or "")
  return hs
end

-- Regressed under onRegression: Warn: Ready=True, but Argo CD shows it
local regressed = condition(status, "Regressed")
if status.verdict == "Regressed" or (regressed ~= nil and regressed.status == "True") then
  hs.status = "Degraded"
  hs.message = "Regressed: " .. ((status.regression and status.regression.message)
    or (regressed and regressed.message) or "")
  return hs
end

-- Succeeded, the verdict not yet written (one tick): still working
local reconciling = condition(status, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  -- while it works, status.message says what it waits for and since when
  if status.phase ~= "Succeeded" and status.message ~= nil then
    hs.message = status.phase .. ": " .. status.message
  else
    hs.message = reconciling.message or ("phase " .. status.phase)
  end
  return hs
end

if status.phase == "Succeeded" then
  hs.status = "Healthy"
  hs.message = "Succeeded"
  if status.results ~= nil and status.results.tpmC ~= nil then
    hs.message = hs.message .. ": tpmC " .. string.format("%.1f", status.results.tpmC)
  elseif status.ycsb ~= nil and status.ycsb.opsPerSecond ~= nil then
    hs.message = hs.message .. ": YCSB " .. (status.ycsb.workload or "") .. " "
      .. string.format("%.1f", status.ycsb.opsPerSecond) .. " operations/s"
  end
  if status.verdict ~= nil then
    hs.message = hs.message .. ", verdict " .. status.verdict
  end
  return hs
end

hs.status = "Progressing"
hs.message = "phase " .. status.phase
return hs
