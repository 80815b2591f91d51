document.getElementById("confirm-logout")?.click();
