; Inno Setup script for SPAR Desktop on Windows (per-user install, no administrator rights).
;
;   iscc /DAppVersion=0.1.0 /DSourceDir=build\bundle\dist\spar-desktop /DOutputDir=build\bundle ^
;        /DIconFile=build\bundle\icons\spar-desktop.ico installers\windows\spar-desktop.iss
;
; Normally run by installers/build_bundle.py on a Windows runner (.github/workflows/release.yml).
; Not run on the Linux machine this was written on: it is untested until CI runs it.
;
; Installs the one-folder PyInstaller app into %LOCALAPPDATA%\Programs\SPAR Desktop, adds a Start
; menu entry (and optionally a desktop icon), "Open with SPAR Desktop" on folders, and an
; uninstaller in Settings > Apps. Upgrading = running a newer installer (same AppId): files are
; replaced, the data dir (%LOCALAPPDATA%\SPAR\spar-desktop: index, workspaces, settings) is never
; touched by installing, upgrading or uninstalling.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\build\bundle\dist\spar-desktop"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\build\bundle"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\bundle\icons\spar-desktop.ico"
#endif

[Setup]
AppId={{6C0C2B0E-5A8E-4E43-9F0B-3F1E3B8E5D21}
AppName=SPAR Desktop
AppVersion={#AppVersion}
AppPublisher=SPAR
DefaultDirName={localappdata}\Programs\SPAR Desktop
DefaultGroupName=SPAR Desktop
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#OutputDir}
OutputBaseFilename=SPAR-Desktop-{#AppVersion}-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\spar-desktop.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
LicenseFile={#SourceDir}\_internal\THIRD_PARTY_LICENSES
CloseApplications=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "folderverb"; Description: "Add ""Open with SPAR Desktop"" to folders"; GroupDescription: "Explorer:"

[Files]
; the whole one-folder app; an upgrade replaces it (files the new version lacks are removed below)
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[InstallDelete]
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
Name: "{autoprograms}\SPAR Desktop"; Filename: "{app}\spar-desktop.exe"
Name: "{autodesktop}\SPAR Desktop"; Filename: "{app}\spar-desktop.exe"; Tasks: desktopicon

[Registry]
; Explorer: right-click a folder > Open with SPAR Desktop (per user; removed on uninstall)
Root: HKCU; Subkey: "Software\Classes\Directory\shell\SPARDesktop"; ValueType: string; ValueName: ""; ValueData: "Open with SPAR Desktop"; Flags: uninsdeletekey; Tasks: folderverb
Root: HKCU; Subkey: "Software\Classes\Directory\shell\SPARDesktop"; ValueType: string; ValueName: "Icon"; ValueData: "{app}\spar-desktop.exe"; Tasks: folderverb
Root: HKCU; Subkey: "Software\Classes\Directory\shell\SPARDesktop\command"; ValueType: string; ValueName: ""; ValueData: """{app}\spar-desktop.exe"" ""%1"""; Tasks: folderverb

[Run]
Filename: "{app}\spar-desktop.exe"; Description: "{cm:LaunchProgram,SPAR Desktop}"; Flags: nowait postinstall skipifsilent
