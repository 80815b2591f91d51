import type { Application, AppStatus, Visibility } from "@promptmint/contracts";
import type { ReactNode } from "react";
import { cn } from "../../lib/cn";
import { embedVisibilityHint } from "../../lib/embed-hint";
import { Card, CardBody } from "./card";
import { editorPriceProps, PriceField, type PriceFieldProps } from "./price-field";
import { SelectField, type SelectOption } from "./select-field";
import { TextField } from "./text-field";
import { TextareaField } from "./textarea-field";

// The basic settings of an app as the prompt builder, the prompt editor and the workflow editor
// show them (SPEC §2): one section, so a fix to a label, a hint or the layout lands on all three.

export const STATUS_OPTIONS: readonly (SelectOption & { value: AppStatus })[] = [
  { value: "draft", label: "Draft" },
  { value: "live", label: "Live" },
  { value: "archived", label: "Archived" },
];

/** The editors' visibility choices, worded as on the create and detail forms. */
export const VISIBILITY_OPTIONS: readonly (SelectOption & { value: Visibility })[] = [
  { value: "private", label: "Private - Only you can access" },
  { value: "public", label: "Public - Anyone can discover and use" },
  { value: "embed", label: "Embed - Can be embedded in other websites" },
];

/** SPEC §2: the prompt builder labels embed 'Embeddable'. */
export const BUILDER_VISIBILITY_OPTIONS: readonly (SelectOption & { value: Visibility })[] = [
  { value: "private", label: "Private" },
  { value: "public", label: "Public" },
  { value: "embed", label: "Embeddable" },
];

export interface BasicSettingsValues {
  name: string;
  status: AppStatus;
  description: string;
  visibility: Visibility;
}

export type BasicSettingsErrors = Partial<Record<keyof BasicSettingsValues, string>>;

/**
 * Name and status, description, visibility and price. With a `slug` field (the builder's), the
 * slug stands beside the name and status joins visibility and price on the last row.
 */
export function BasicSettingsFields({
  values,
  errors,
  onChange,
  nameLabel = "Application Name",
  namePlaceholder,
  descriptionPlaceholder,
  visibilityOptions = VISIBILITY_OPTIONS,
  slug,
  price,
  children,
}: {
  values: BasicSettingsValues;
  errors: BasicSettingsErrors;
  onChange: (changes: Partial<BasicSettingsValues>) => void;
  nameLabel?: string;
  namePlaceholder?: string;
  descriptionPlaceholder?: string;
  visibilityOptions?: readonly SelectOption[];
  /** A field shown beside the name (the builder's URL slug). */
  slug?: ReactNode;
  price: PriceFieldProps;
  /** Fields between the description and visibility (the prompt editor's Interaction Mode). */
  children?: ReactNode;
}) {
  const status = (
    <SelectField
      label="Status"
      options={STATUS_OPTIONS}
      value={values.status}
      error={errors.status}
      onChange={(event) => onChange({ status: event.target.value as AppStatus })}
    />
  );
  return (
    <div className="space-y-5">
      <div className="grid gap-5 sm:grid-cols-2">
        <TextField
          label={nameLabel}
          required
          placeholder={namePlaceholder}
          value={values.name}
          error={errors.name}
          onChange={(event) => onChange({ name: event.target.value })}
        />
        {slug ?? status}
      </div>
      <TextareaField
        label="Description"
        rows={3}
        placeholder={descriptionPlaceholder}
        value={values.description}
        error={errors.description}
        onChange={(event) => onChange({ description: event.target.value })}
      />
      {children}
      <div className={cn("grid gap-5 sm:grid-cols-2", slug !== undefined && "lg:grid-cols-3")}>
        {slug !== undefined && status}
        <SelectField
          label="Visibility"
          options={visibilityOptions}
          value={values.visibility}
          error={errors.visibility}
          hint={embedVisibilityHint(values.visibility)}
          onChange={(event) => onChange({ visibility: event.target.value as Visibility })}
        />
        <PriceField {...price} />
      </div>
    </div>
  );
}

/**
 * The prompt and workflow editors' Basic Settings tab: the fields in a card, priced in cents
 * with the saved app's announced increase, if any, under the price.
 */
export function EditorBasicSettingsCard({
  application,
  values,
  errors,
  onChange,
  descriptionPlaceholder,
  children,
}: {
  application: Application;
  values: BasicSettingsValues & { price_cents: number };
  errors: BasicSettingsErrors & { price_cents?: string };
  onChange: (changes: Partial<BasicSettingsValues & { price_cents: number }>) => void;
  descriptionPlaceholder?: string;
  children?: ReactNode;
}) {
  return (
    <Card>
      <CardBody>
        <BasicSettingsFields
          values={values}
          errors={errors}
          onChange={onChange}
          descriptionPlaceholder={descriptionPlaceholder}
          price={editorPriceProps(application, values.price_cents, errors.price_cents, (price_cents) =>
            onChange({ price_cents }),
          )}
        >
          {children}
        </BasicSettingsFields>
      </CardBody>
    </Card>
  );
}
