/** The model boundary's types, declared in core/agent/model-boundary.ts (the judge uses them too); re-exported for the agent. */
export type {
  ModelAdapter,
  ModelFailure,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelUsage,
  ToolCall,
  ToolSpec,
} from "../../core/agent/model-boundary.js";
