import type { WebhookEndpoint } from "@promptmint/contracts";
import { useId } from "react";
import { CheckboxField } from "../../components/ui/checkbox-field";
import { LoadingState } from "../../components/ui/spinner";
import { TextField } from "../../components/ui/text-field";
import { getErrorMessage } from "../../lib/api-client";
import { useWebhookEventTypes } from "./api/list-event-types";

/** An endpoint as the form holds it, for adding and editing one. */
export interface EndpointDraft {
  url: string;
  description: string;
  /** `*`: every event type, present and future. */
  allEvents: boolean;
  eventTypes: string[];
}

/** Problems by the API's field names, so a 400's `fields` land on the same inputs. */
export type EndpointErrors = Partial<Record<"url" | "description" | "event_types", string>>;

export const ALL_EVENTS = "*";

export function draftOf(endpoint?: WebhookEndpoint): EndpointDraft {
  const types = endpoint?.event_types ?? [ALL_EVENTS];
  return {
    url: endpoint?.url ?? "",
    description: endpoint?.description ?? "",
    allEvents: types.includes(ALL_EVENTS),
    eventTypes: types.filter((type) => type !== ALL_EVENTS),
  };
}

/** The draft as the API's fields, or the problems the browser can tell without asking. */
export function parseDraft(
  draft: EndpointDraft,
): { endpoint: { url: string; description: string; event_types: string[] } } | { errors: EndpointErrors } {
  const errors: EndpointErrors = {};
  const url = draft.url.trim();
  if (url === "") errors.url = "Endpoint URL is required";
  if (!draft.allEvents && draft.eventTypes.length === 0)
    errors.event_types = "Choose at least one event type";
  if (Object.keys(errors).length > 0) return { errors };
  return {
    endpoint: {
      url,
      description: draft.description.trim(),
      event_types: draft.allEvents ? [ALL_EVENTS] : draft.eventTypes,
    },
  };
}

/** URL, description and the event types (checkboxes, or "All events"): native inputs, keyboard-first. */
export function EndpointFields({
  draft,
  onChange,
  errors,
}: {
  draft: EndpointDraft;
  onChange: (draft: EndpointDraft) => void;
  errors: EndpointErrors;
}) {
  const set = (changes: Partial<EndpointDraft>) => onChange({ ...draft, ...changes });
  return (
    <div className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField
          label="Endpoint URL"
          type="url"
          inputMode="url"
          autoComplete="off"
          placeholder="https://example.com/webhooks/promptmint"
          hint="Events are POSTed here as JSON, signed per Standard Webhooks."
          value={draft.url}
          error={errors.url}
          onChange={(event) => set({ url: event.target.value })}
        />
        <TextField
          label="Description (optional)"
          maxLength={200}
          autoComplete="off"
          placeholder="Billing service"
          value={draft.description}
          error={errors.description}
          onChange={(event) => set({ description: event.target.value })}
        />
      </div>
      <EventTypeChoices draft={draft} onChange={onChange} error={errors.event_types} />
    </div>
  );
}

function EventTypeChoices({
  draft,
  onChange,
  error,
}: {
  draft: EndpointDraft;
  onChange: (draft: EndpointDraft) => void;
  error?: string;
}) {
  const eventTypes = useWebhookEventTypes();
  const prefix = useId();
  const toggle = (type: string, checked: boolean) =>
    onChange({
      ...draft,
      eventTypes: checked ? [...draft.eventTypes, type] : draft.eventTypes.filter((t) => t !== type),
    });
  return (
    <fieldset className="space-y-2" aria-describedby={error ? `${prefix}-error` : undefined}>
      <legend className="text-sm font-medium text-slate-700">Event types</legend>
      <CheckboxField
        label="All events (including types added later)"
        checked={draft.allEvents}
        onChange={(event) => onChange({ ...draft, allEvents: event.target.checked })}
      />
      {/* The list of types only when choosing them: "All events" keeps the form short. */}
      {!draft.allEvents && eventTypes.isPending && (
        <LoadingState label="Loading event types..." className="py-4" />
      )}
      {!draft.allEvents && eventTypes.isError && (
        <p className="text-sm text-red-600">{getErrorMessage(eventTypes.error)}</p>
      )}
      {!draft.allEvents && eventTypes.data && (
        <ul className="grid gap-x-6 gap-y-3 border-l-2 border-slate-100 pl-3 sm:grid-cols-2">
          {eventTypes.data.map(({ type, description }) => (
            <li key={type} className="flex items-start gap-2">
              <input
                id={`${prefix}-${type}`}
                type="checkbox"
                aria-describedby={`${prefix}-${type}-description`}
                className="mt-0.5 size-4 shrink-0 accent-brand-600 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600"
                checked={draft.eventTypes.includes(type)}
                onChange={(event) => toggle(type, event.target.checked)}
              />
              <div className="min-w-0">
                <label htmlFor={`${prefix}-${type}`} className="block font-mono text-sm text-slate-800">
                  {type}
                </label>
                <p id={`${prefix}-${type}-description`} className="text-xs text-slate-500">
                  {description}
                </p>
              </div>
            </li>
          ))}
        </ul>
      )}
      {error && (
        <p id={`${prefix}-error`} className="text-sm text-red-600">
          {error}
        </p>
      )}
    </fieldset>
  );
}
