import { Alert } from "./alert";

/** The one way a screen shows a failed load: a title ('Error' by default) and the message. */
export function ErrorBox({
  title = "Error",
  message,
  className,
}: {
  title?: string;
  message: string;
  className?: string;
}) {
  return (
    <Alert tone="error" title={title} className={className}>
      {message}
    </Alert>
  );
}
