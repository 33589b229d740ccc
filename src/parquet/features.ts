// The `huggingface` key-value metadata that the datasets library writes into every Parquet file it
// makes (the Hub's conversions included): JSON `{"info": {"features": {column: feature}}}`, where
// a feature is `{"_type": "Value" | "ClassLabel" | "Image" | "Sequence" | "List" | …, …}`, a plain
// object of features (a struct, written without `_type`), or a one-element array (a list of it),
// as `generate_from_dict` in the datasets library reads them back.

/** One column's feature as the datasets library wrote it; unknown fields are kept as they are. */
export interface HubFeature {
  /** `Value`, `ClassLabel`, `Image`, `Audio`, `Sequence`, `List`, `LargeList`, …; absent for a struct or list form. */
  readonly _type?: string;
  /** `Value`'s type: `string`, `int64`, `binary`, … */
  readonly dtype?: string;
  /** `ClassLabel`'s names, index = label. */
  readonly names?: readonly string[];
  /** `Sequence` / `List`: the element's feature. */
  readonly feature?: unknown;
  readonly [field: string]: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The features of a file's `huggingface` metadata value, or undefined when there is none or it is
 * not the shape above (a file written by another tool: its columns are still readable, only
 * without names for its labels). Never throws.
 */
export function hubFeatures(metadataJson: string | undefined): Record<string, HubFeature> | undefined {
  if (metadataJson === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadataJson);
  } catch {
    return undefined;
  }
  const features = isRecord(parsed) && isRecord(parsed.info) ? parsed.info.features : undefined;
  if (!isRecord(features)) return undefined;
  const out: Record<string, HubFeature> = {};
  for (const [column, feature] of Object.entries(features)) {
    // A list form (`[feature]`) is kept as `{ feature }`, so every column has an object.
    if (isRecord(feature)) out[column] = feature;
    else if (Array.isArray(feature)) out[column] = { feature: feature[0] };
  }
  return out;
}

/**
 * The class names of a ClassLabel column (index = label), or undefined when the column is not one.
 * A `Sequence`/`List` of ClassLabel (multi-label columns) gives its element's names.
 */
export function classLabelNames(features: Record<string, HubFeature> | undefined, column: string): readonly string[] | undefined {
  let feature: unknown = features?.[column];
  // Sequence(ClassLabel) and List(ClassLabel) nest it one level; a list form nests it in an array.
  for (let depth = 0; depth < 2 && feature !== undefined; depth++) {
    if (Array.isArray(feature)) feature = feature[0];
    if (!isRecord(feature)) return undefined;
    if (feature._type === 'ClassLabel') {
      const { names } = feature;
      return Array.isArray(names) && names.every((n) => typeof n === 'string') ? (names as string[]) : undefined;
    }
    feature = feature.feature;
  }
  return undefined;
}
