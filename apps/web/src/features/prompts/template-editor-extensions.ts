import { autocompletion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import type { Extension } from "@codemirror/state";
import {
  Decoration,
  type DecorationSet,
  EditorView,
  hoverTooltip,
  MatchDecorator,
  ViewPlugin,
  type ViewUpdate,
} from "@codemirror/view";
import type { SchemaProperty } from "@promptmint/contracts";
import { PLACEHOLDER_PATTERN, VARIABLE_NAME_PATTERN } from "../../lib/template-variables";

export type VariableProperties = Readonly<Record<string, SchemaProperty>>;

const theme = EditorView.baseTheme({
  ".cm-template-variable": {
    backgroundColor: "#dbeafe",
    color: "#1d4ed8",
    borderRadius: "4px",
    fontWeight: "600",
  },
  ".cm-template-variable-unknown": {
    backgroundColor: "#fef3c7",
    color: "#92400e",
    borderRadius: "4px",
    fontWeight: "600",
  },
  ".cm-template-variable-invalid": {
    backgroundColor: "#fee2e2",
    color: "#b91c1c",
    borderRadius: "4px",
    textDecoration: "underline wavy",
  },
  ".cm-tooltip.cm-tooltip-autocomplete > ul": { fontFamily: "ui-monospace, monospace", padding: "4px" },
  ".cm-tooltip.cm-tooltip-autocomplete > ul > li": { borderRadius: "4px", padding: "2px 8px" },
  ".cm-tooltip.cm-tooltip-autocomplete > ul > li[aria-selected]": {
    backgroundColor: "#2563eb",
    color: "#fff",
  },
  ".cm-completionDetail": { marginLeft: "8px", opacity: "0.7" },
  ".cm-variable-help": { padding: "6px 10px", fontSize: "12px", maxWidth: "20rem", lineHeight: "1.4" },
  ".cm-variable-help-name": { fontFamily: "ui-monospace, monospace", fontWeight: "600", color: "#0f172a" },
  ".cm-variable-help-note": { color: "#475569" },
});

export type VariableState = "known" | "unknown" | "invalid";

export function variableStateOf(name: string, properties: VariableProperties): VariableState {
  if (!VARIABLE_NAME_PATTERN.test(name)) return "invalid";
  return Object.hasOwn(properties, name) ? "known" : "unknown";
}

const markOf: Record<VariableState, Decoration> = {
  known: Decoration.mark({ class: "cm-template-variable" }),
  unknown: Decoration.mark({ class: "cm-template-variable-unknown" }),
  invalid: Decoration.mark({ class: "cm-template-variable-invalid" }),
};

/** `{{variable}}` highlighting: schema variables blue, others amber, malformed names red. */
function variableHighlighting(properties: VariableProperties): Extension {
  const matcher = new MatchDecorator({
    regexp: new RegExp(PLACEHOLDER_PATTERN.source, "g"),
    decoration: (match) => markOf[variableStateOf(match[1] ?? "", properties)],
  });
  return ViewPlugin.fromClass(
    class {
      decorations: DecorationSet;
      constructor(view: EditorView) {
        this.decorations = matcher.createDeco(view);
      }
      update(update: ViewUpdate) {
        this.decorations = matcher.updateDeco(update, this.decorations);
      }
    },
    { decorations: (plugin) => plugin.decorations },
  );
}

/** After `{{`, offers the input schema's variables (with their type and description). */
export function variableCompletionSource(properties: VariableProperties) {
  return (context: CompletionContext): CompletionResult | null => {
    const typed = context.matchBefore(/\{\{\s*[A-Za-z0-9_]*/);
    if (!typed) return null;
    const nameStart = typed.from + typed.text.search(/[A-Za-z0-9_]*$/);
    const closed = context.state.sliceDoc(context.pos, context.pos + 2) === "}}";
    return {
      from: nameStart,
      options: Object.entries(properties).map(([name, property]) => ({
        label: name,
        type: "variable",
        detail: property.type,
        info: property.description,
        apply: closed ? name : `${name}}}`,
      })),
      validFor: /^[A-Za-z0-9_]*$/,
    };
  };
}

/** The help shown when hovering a variable: its type and description, or why it is a problem. */
export function variableHelpOf(name: string, properties: VariableProperties): string {
  const state = variableStateOf(name, properties);
  if (state === "invalid") return "Not a valid variable name";
  if (state === "unknown") return "Not in input schema";
  const property = properties[name];
  if (!property) return "Not in input schema";
  return property.description ? `${property.type} — ${property.description}` : property.type;
}

function variableHover(properties: VariableProperties): Extension {
  return hoverTooltip((view, pos) => {
    const line = view.state.doc.lineAt(pos);
    for (const match of line.text.matchAll(new RegExp(PLACEHOLDER_PATTERN.source, "g"))) {
      const start = line.from + match.index;
      const end = start + match[0].length;
      if (pos < start || pos > end) continue;
      const name = match[1] ?? "";
      return {
        pos: start,
        end,
        above: true,
        create() {
          const dom = document.createElement("div");
          dom.className = "cm-variable-help";
          const title = document.createElement("div");
          title.className = "cm-variable-help-name";
          title.textContent = `{{${name}}}`;
          const note = document.createElement("div");
          note.className = "cm-variable-help-note";
          note.textContent = variableHelpOf(name, properties);
          dom.append(title, note);
          return { dom };
        },
      };
    }
    return null;
  });
}

/** Everything a prompt template editor adds to CodeMirror, for the given input schema. */
export function templateEditorExtensions(properties: VariableProperties): Extension {
  return [
    theme,
    variableHighlighting(properties),
    autocompletion({ override: [variableCompletionSource(properties)], icons: false }),
    variableHover(properties),
  ];
}
