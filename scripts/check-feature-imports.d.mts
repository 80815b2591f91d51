export function importsOf(text: string): string[];
export function featureImportProblems(src: string, file: string, text: string): string[];
export function checkFeatureImports(src: string): string[];
