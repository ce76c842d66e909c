-- Argo CD health of a BenchmarkSchedule (bench.tpcc.dev): spec.suspend, then the kstatus Ready
-- condition (False with Stalled=True and reason InvalidSchedule or InvalidTemplate when it cannot
-- schedule). Its runs' verdicts are not its health. Lua 5.1 (Argo CD's gopher-lua) and 5.4 alike.
local hs = {}

local function condition(status, kind)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "schedule suspended"
  return hs
end
local status = obj.status
if status == nil then
  hs.status = "Progressing"
  hs.message = "waiting for the operator"
  return hs
end
local generation = obj.metadata and obj.metadata.generation
if generation ~= nil and status.observedGeneration ~= nil and status.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "generation " .. tostring(generation) .. " not yet observed"
  return hs
end

local stalled = condition(status, "Stalled")
local ready = condition(status, "Ready")
if (stalled ~= nil and stalled.status == "True") or (ready ~= nil and ready.status == "False") then
  local why = stalled
  if why == nil or why.status ~= "True" then
    why = ready
  end
  hs.status = "Degraded"
  hs.message = (why.reason or "NotReady") .. ": " .. (why.message or "")
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "scheduled"
  return hs
end
hs.status = "Progressing"
hs.message = "not yet ready"
return hs
