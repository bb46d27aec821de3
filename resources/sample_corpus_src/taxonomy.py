"""A document-management-system style taxonomy (term tree) and per-file term assignments.

A term may appear under two parents ("Gearbox" under Assets > Wind Turbines and under Maintenance;
"Training" under Safety and under People). Term names are unique identifiers.
"""

from __future__ import annotations


def T(name: str, description: str, *children):
    return {"name": name, "description": description, "children": list(children)}


TAXONOMY = [
    T("Safety", "Health, safety and environment",
      T("Working at Height", "Tower climbs, nacelle and hub work, ladders, fall protection and rescue"),
      T("Electrical Safety", "LV, HV, DC and battery systems; isolation and lockout; arc flash"),
      T("Lone Working", "Working alone or remotely, driving on site"),
      T("Incident Management", "Incident and near-miss reports, investigations, corrective actions"),
      T("Training", "Certificates (GWO), rescue drills, authorisations")),
    T("Assets", "Physical generating assets and their components",
      T("Wind Turbines", "Aerion AW-2.3 and AW-3.0 turbines",
        T("Gearbox", "Main gearboxes, bearings, lubrication"),
        T("Blades", "Rotor blades, leading-edge erosion, lightning protection"),
        T("Yaw System", "Yaw drives, yaw brakes")),
      T("Solar PV", "Solar modules and balance of plant",
        T("Inverters", "Central inverters HF-INV-01 to 06")),
      T("Battery Storage", "Battery energy storage systems (BESS)"),
      T("Grid Connection", "Substations, DNO connection agreements, export limits")),
    T("Maintenance", "Scheduled and corrective maintenance",
      T("Gearbox", "Main gearboxes, bearings, lubrication"),
      T("Oil Analysis", "Gear oil sampling and laboratory results"),
      T("Condition Monitoring", "Vibration and oil condition monitoring systems (CMS)"),
      T("Inspections", "Planned inspections, examinations and surveys")),
    T("Projects", "Capital and improvement projects",
      T("Project Falcon", "Drivetrain condition monitoring and SCADA historian, 2023-2024"),
      T("Project Osprey", "5 MW / 10 MWh battery storage at Hollins Flats, 2024"),
      T("Project Heron", "Blade leading-edge repair campaign at Brackenridge, 2022")),
    T("Finance", "Financial planning and reporting",
      T("Budget", "Annual budgets and budget tracking"),
      T("Management Accounts", "Actuals, variances and commentary"),
      T("Insurance", "Insurance cover and claims")),
    T("Governance", "How the company is directed and controlled",
      T("Board Minutes", "Minutes of Board meetings"),
      T("Policies", "Company policies"),
      T("Risk Management", "Risk registers and risk assessments")),
    T("Legal", "Legal agreements",
      T("Contracts", "Supply, service and construction contracts"),
      T("Leases", "Land leases")),
    T("People", "Human resources",
      T("HR Policy", "Employment policies"),
      T("Training", "Certificates (GWO), rescue drills, authorisations")),
    T("Sites", "Operating sites",
      T("Brackenridge", "Site A, 12 x Aerion AW-2.3 wind turbines"),
      T("Carrow Moor", "Site B, 8 x Aerion AW-3.0 wind turbines"),
      T("Hollins Flats", "Site C, 18 MWp solar park and Osprey BESS")),
]

F23 = "Engineering/Project-Falcon/2023"
OSP = "Engineering/Project-Osprey/2024"
IR = "Operations/Incident-Reports"
BM = "Management/Board-Minutes"

ASSIGNMENTS = {
    # Engineering
    f"{F23}/Falcon-Project-Charter.docx": ["Project Falcon", "Condition Monitoring", "Budget"],
    f"{F23}/Falcon-CMS-Technical-Specification.pdf": ["Project Falcon", "Condition Monitoring", "Gearbox", "Oil Analysis"],
    f"{F23}/Falcon-Vendor-Evaluation.csv": ["Project Falcon", "Contracts"],
    f"{F23}/Falcon-Meeting-Notes-2023-02-08.md": ["Project Falcon", "Condition Monitoring"],
    f"{F23}/Falcon-Meeting-Notes-2023-03-22.md": ["Project Falcon", "Gearbox", "Budget", "Carrow Moor"],
    f"{F23}/Falcon-Meeting-Notes-2023-06-14.md": ["Project Falcon", "Condition Monitoring", "Carrow Moor"],
    f"{F23}/Falcon-Progress-Report-Q3-2023.pdf": ["Project Falcon", "Condition Monitoring", "Budget"],
    "Engineering/Project-Falcon/2024/Falcon-Closeout-Report.pdf": ["Project Falcon", "Condition Monitoring", "Budget"],
    f"{OSP}/Osprey-BESS-Design-Basis.pdf": ["Project Osprey", "Battery Storage", "Grid Connection", "Electrical Safety", "Hollins Flats"],
    f"{OSP}/Osprey-Kickoff-Meeting-Notes.md": ["Project Osprey", "Battery Storage", "Hollins Flats"],
    f"{OSP}/Osprey-Grid-Connection-Summary.docx": ["Project Osprey", "Grid Connection"],
    f"{OSP}/Osprey-Commissioning-Plan.txt": ["Project Osprey", "Battery Storage"],
    f"{OSP}/Osprey-Risk-Register.csv": ["Project Osprey", "Risk Management"],
    "Engineering/Project-Heron/2022/Heron-Blade-Repair-Summary.docx": ["Project Heron", "Blades", "Brackenridge"],
    "Engineering/Project-Heron/2022/Heron-Inspection-Findings.csv": ["Project Heron", "Blades", "Inspections", "Brackenridge"],
    # Operations
    "Operations/Procedures/OP-PRO-112-Tower-Climb-and-Rescue-Procedure.pdf": ["Working at Height", "Training"],
    "Operations/Procedures/OP-PRO-203-Gearbox-Oil-Sampling.docx": ["Gearbox", "Oil Analysis"],
    "Operations/Procedures/OP-PRO-118-Isolation-and-Lockout.md": ["Electrical Safety"],
    f"{IR}/2022/IR-2022-003-Dropped-Object-BR-T07.pdf": ["Incident Management", "Working at Height", "Brackenridge"],
    f"{IR}/2022/IR-2022-011-Near-Miss-Arc-Flash-HF-INV-03.docx": ["Incident Management", "Electrical Safety", "Inverters", "Hollins Flats"],
    f"{IR}/2022/IR-2022-014-Minor-Injury-Ladder-Climb-CM-T06.txt": ["Incident Management", "Working at Height", "Carrow Moor"],
    f"{IR}/2023/IR-2023-007-Gearbox-Failure-CM-T04.pdf": ["Incident Management", "Gearbox", "Oil Analysis", "Carrow Moor"],
    f"{IR}/2023/IR-2023-012-Damaged-Fall-Arrest-Lanyard.docx": ["Incident Management", "Working at Height", "Brackenridge"],
    f"{IR}/2023/IR-2023-019-Lightning-Strike-BR-T03.md": ["Incident Management", "Blades", "Insurance", "Brackenridge"],
    f"{IR}/2023/IR-2023-021-Vehicle-Collision-Access-Track.txt": ["Incident Management", "Lone Working", "Carrow Moor"],
    f"{IR}/2024/IR-2024-002-BESS-HVAC-Fault-Osprey-Commissioning.pdf": ["Incident Management", "Battery Storage", "Project Osprey", "Hollins Flats"],
    f"{IR}/2024/IR-2024-005-Yaw-System-Failure-CM-T02.docx": ["Incident Management", "Yaw System", "Carrow Moor"],
    f"{IR}/Incident-Register.csv": ["Incident Management"],
    "Operations/Maintenance-Logs/2022/Turbine-Maintenance-Log-2022.csv": ["Wind Turbines", "Oil Analysis", "Inspections"],
    "Operations/Maintenance-Logs/2023/Turbine-Maintenance-Log-2023.csv": ["Wind Turbines", "Oil Analysis", "Gearbox"],
    "Operations/Maintenance-Logs/2024/Turbine-Maintenance-Log-2024.csv": ["Wind Turbines", "Oil Analysis", "Yaw System"],
    "Operations/Asset-Register/asset-register.json": ["Wind Turbines", "Inverters", "Battery Storage"],
    # Finance
    "Finance/Budgets/2022/FY2022-Operating-Budget.csv": ["Budget", "Project Heron"],
    "Finance/Budgets/2023/FY2023-Approved-Budget.pdf": ["Budget", "Project Falcon"],
    "Finance/Budgets/2023/FY2023-Budget-Tracker.csv": ["Budget", "Project Falcon"],
    "Finance/Budgets/2024/FY2024-Budget-Summary.docx": ["Budget", "Project Osprey"],
    "Finance/Budgets/2024/FY2024-Capital-Budget-Tracker.csv": ["Budget", "Project Osprey"],
    "Finance/Reports/Q4-2023-Management-Accounts-Commentary.txt": ["Management Accounts", "Insurance"],
    # HR
    "HR/Policies/HS-POL-001-Health-and-Safety-Policy.pdf": ["Policies", "Incident Management"],
    "HR/Policies/HS-POL-004-Working-at-Height-Policy.pdf": ["Policies", "Working at Height"],
    "HR/Policies/HS-POL-005-Electrical-Safety-Policy.docx": ["Policies", "Electrical Safety", "Battery Storage"],
    "HR/Policies/HS-POL-007-Lone-Working-Policy.md": ["Policies", "Lone Working"],
    "HR/Policies/HR-POL-012-Annual-Leave-Policy.docx": ["Policies", "HR Policy"],
    "HR/Training/Training-Matrix-2023.csv": ["Training", "Working at Height"],
    # Legal
    "Legal/Contracts/NWR-C-2023-014-Veridian-CMS-Supply-Agreement.pdf": ["Contracts", "Project Falcon", "Condition Monitoring"],
    "Legal/Contracts/NWR-C-2024-003-Halden-BESS-EPC-Contract.docx": ["Contracts", "Project Osprey", "Battery Storage"],
    "Legal/Contracts/Aerion-OM-Service-Agreement-Summary-2022.txt": ["Contracts", "Wind Turbines", "Gearbox"],
    "Legal/Contracts/Carrow-Moor-Land-Lease-Summary.md": ["Leases", "Carrow Moor"],
    # Management
    f"{BM}/2022/Board-Minutes-2022-12-06.docx": ["Board Minutes", "Budget", "Project Falcon"],
    f"{BM}/2023/Board-Minutes-2023-04-18.pdf": ["Board Minutes", "Gearbox", "Project Falcon", "Budget"],
    f"{BM}/2023/Board-Minutes-2023-10-10.docx": ["Board Minutes", "Project Falcon", "Working at Height"],
    f"{BM}/2024/Board-Minutes-2024-03-12.pdf": ["Board Minutes", "Project Osprey", "Project Falcon"],
    f"{BM}/2024/Board-Minutes-2024-09-17.md": ["Board Minutes", "Project Osprey", "Battery Storage"],
    # Intranet
    "Intranet/HSE-Hub/HSE-Hub-Home.html": ["Policies", "Working at Height", "Incident Management"],
    # richer formats (rich_formats.py)
    f"{IR}/2023/IR-2023-002-Site-Memo-Ice-Fall-BR-T05-scanned.pdf": ["Incident Management", "Brackenridge"],
    f"{OSP}/Photos/BESS-Compound-Safety-Notice.jpg": ["Battery Storage", "Electrical Safety", "Hollins Flats"],
    "Operations/Asset-Register/Blade-Inspection-Results-2024.xlsx": ["Blades", "Inspections", "Brackenridge", "Carrow Moor"],
    "Management/Steering-Committee/Osprey-Steering-Committee-2024-07-23.pptx": ["Project Osprey", "Budget", "Risk Management"],
    f"{IR}/2024/RE-Near-miss-IR-2024-004-excavator-near-33kV-cable.eml": ["Incident Management", "Electrical Safety", "Project Osprey", "Hollins Flats"],
    "Archive/Legacy/Audit-Papers-2019.zip": ["Working at Height", "Inspections", "Brackenridge"],
}


def term_names(nodes=TAXONOMY) -> set[str]:
    out = set()
    for n in nodes:
        out.add(n["name"])
        out |= term_names(n["children"])
    return out
