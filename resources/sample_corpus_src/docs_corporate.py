"""Finance, HR (policies), Legal (contracts) and Management (board minutes)."""

from datetime import date as D

from .blocks import H1, H2, H3, META, OL, P, TABLE, UL, Doc
from .org import (
    BESS_EPC, CHAIR, CMS_VENDOR, ENG, FALCON_PM, FD, HQ, HR, HSE, LEGAL, MD, NED, OEM, OSPREY_PM,
    RELIABILITY, SITE_A, SITE_A_MGR, SITE_B, SITE_B_MGR, SITE_C, SOLAR_LEAD,
)

BOARD = "Management/Board-Minutes"

FINANCE = [
    Doc(
        "Finance/Budgets/2023/FY2023-Approved-Budget.pdf",
        D(2023, 1, 9),
        "FY2023 Approved Budget - Capital and Operating",
        FD,
        subject="Budget for the financial year 1 January - 31 December 2023",
        keywords="budget; FY2023; capital; Project Falcon; operating costs",
        pages=[
            [
                H1("FY2023 Approved Budget"),
                META([
                    ("Financial year", "1 January - 31 December 2023"),
                    ("Prepared by", f"{FD}, Finance Director"),
                    ("Approved", "Board of Directors, 6 December 2022 (minute 2022/12-4)"),
                    ("Issued", "9 January 2023"),
                ]),
                H2("1. Overview"),
                P("""This document records the FY2023 budget as approved by the Board. Revenue assumes long-term
                average wind and irradiance, a realised power price of £85/MWh for merchant volumes and the
                existing fixed-price contract for 60% of Carrow Moor output. Any change to a capital line above
                £100,000 requires Board approval; smaller changes are approved by the Finance Director."""),
                H2("2. Revenue and generation"),
                TABLE([
                    ["Site", "Capacity", "Forecast generation (MWh)", "Revenue (£)"],
                    ["Brackenridge Wind Farm (A)", "27.6 MW", "72,500", "6,162,500"],
                    ["Carrow Moor Wind Farm (B)", "24.0 MW", "71,500", "5,863,000"],
                    ["Hollins Flats Solar Park (C)", "18.0 MWp", "16,600", "1,494,000"],
                    ["Other (REGO sales, ancillary services)", "-", "-", "96,500"],
                    ["Total", "", "160,600", "13,616,000"],
                ]),
                H2("3. Operating budget"),
                TABLE([
                    ["Cost line", "£"],
                    ["O&M service agreement (Aerion Wind Services)", "1,640,000"],
                    ["Solar O&M and vegetation management", "310,000"],
                    ["Land lease rents (3 sites)", "402,000"],
                    ["Grid use-of-system charges", "1,120,000"],
                    ["Insurance", "465,000"],
                    ["Staff costs (61 FTE)", "3,420,000"],
                    ["Oil analysis, inspections and minor repairs", "285,000"],
                    ["Office, IT and professional fees", "610,000"],
                    ["Total operating costs", "8,252,000"],
                ]),
            ],
            [
                H2("4. Capital budget"),
                TABLE([
                    ["Project / line", "Owner", "FY2023 budget (£)"],
                    ["Project Falcon - drivetrain CMS and SCADA historian", ENG, "1,250,000"],
                    ["Major component reserve (gearboxes, generators, blades)", ENG, "400,000"],
                    ["Hollins Flats inverter refurbishment (HF-INV-01 to 03)", SOLAR_LEAD, "180,000"],
                    ["Project Osprey - BESS feasibility and grid application", OSPREY_PM, "120,000"],
                    ["Carrow Moor microwave link upgrade", SITE_B_MGR, "55,000"],
                    ["IT and office equipment", FD, "75,000"],
                    ["Capital contingency", FD, "95,000"],
                    ["Total capital budget", "", "2,175,000"],
                ]),
                P("""Project Falcon is the largest capital line for FY2023. Its budget of £1,250,000 covers
                condition-monitoring hardware and software for all 20 wind turbines, installation, the SCADA
                historian upgrade and project management, as set out in the Falcon project charter. Online oil
                particle counters were considered and excluded to stay within the budget."""),
                P("""The major component reserve is held centrally for unplanned failures not covered by the
                Aerion service agreement, which excludes gearbox, main bearing and blade replacements. The
                reserve is based on one major replacement every two years across the fleet."""),
                H2("5. Summary"),
                TABLE([
                    ["", "£"],
                    ["Revenue", "13,616,000"],
                    ["Operating costs", "(8,252,000)"],
                    ["EBITDA", "5,364,000"],
                    ["Capital expenditure", "(2,175,000)"],
                    ["Debt service (Brackenridge and Carrow Moor loans)", "(2,240,000)"],
                    ["Net cash flow", "949,000"],
                ]),
                P("""Budget holders receive monthly reports of actual against budget. A revised forecast is
                presented to the Board each quarter."""),
            ],
        ],
    ),
    Doc(
        "Finance/Budgets/2024/FY2024-Budget-Summary.docx",
        D(2024, 1, 15),
        "FY2024 Budget Summary",
        FD,
        subject="FY2024 budget as approved by the Board on 12 December 2023",
        keywords="budget; FY2024; Project Osprey; capital",
        pages=[[
            H1("FY2024 Budget Summary"),
            META([
                ("Prepared by", f"{FD}, Finance Director"),
                ("Approved", "Board of Directors, 12 December 2023 (Osprey line subject to investment approval)"),
                ("Date", "15 January 2024"),
            ]),
            H2("Headlines"),
            UL([
                "Revenue £13,980,000 (power price assumption £82/MWh for merchant volumes).",
                "Operating costs £8,540,000, including £96,000 of Veridian CMS diagnostic support now in operating costs.",
                "Capital budget £5,345,000, of which Project Osprey £4,600,000.",
                "Osprey to be financed 60% by a green loan facility (£2,760,000) and 40% from cash.",
            ]),
            H2("Capital budget FY2024"),
            TABLE([
                ["Line", "£"],
                ["Project Osprey - 5 MW / 10 MWh BESS at Hollins Flats (subject to Board approval, March 2024)", "4,600,000"],
                ["Project Falcon - carry-over (final milestone and training)", "45,000"],
                ["BR-T09 planned gearbox repair (planet bearing defect found by the Falcon CMS)", "160,000"],
                ["Major component reserve", "450,000"],
                ["CMS phase 2 study (yaw and pitch monitoring)", "30,000"],
                ["IT and office equipment", "60,000"],
                ["Total", "5,345,000"],
            ]),
            H2("Notes"),
            P("""The major component reserve rises from £400,000 to £450,000 after the FY2023 experience:
            the CM-T04 gearbox exchange (£359,000, IR-2023-007) consumed most of the FY2023 reserve. The
            Falcon carry-over reflects the final Veridian milestone that moved into FY2024; the closeout report
            confirms the total project outturn."""),
            P("""Risks: power price below £75/MWh would reduce revenue by about £0.5m; Osprey construction cost
            overrun is mitigated by the fixed-price EPC contract."""),
        ]],
    ),
    Doc(
        "Finance/Reports/Q4-2023-Management-Accounts-Commentary.txt",
        D(2024, 1, 31),
        "Q4 2023 Management Accounts - Commentary",
        FD,
        pages=[[
            H1("Management Accounts Commentary - Q4 and Full Year 2023"),
            META([
                ("Prepared by", f"{FD}, Finance Director"),
                ("Date", "31 January 2024"),
                ("Status", "Unaudited"),
            ]),
            H2("Full-year results"),
            TABLE([
                ["", "Actual (£k)", "Budget (£k)", "Variance (£k)"],
                ["Revenue", "13,902", "13,616", "+286"],
                ["Operating costs", "(8,418)", "(8,252)", "-166"],
                ["EBITDA", "5,484", "5,364", "+120"],
                ["Capital expenditure", "(2,196)", "(2,175)", "-21"],
            ]),
            H2("Commentary"),
            P("""Revenue was £286k above budget. Higher prices in Q1 and a windy Q4 more than offset the lost
            generation from the CM-T04 gearbox failure (41 days, about 1,030 MWh) and the BR-T03 lightning
            strike (16 days). Generation for the year was 158,900 MWh against a budget of 160,600 MWh."""),
            P("""Operating costs were £166k over budget, mainly oil analysis and breather replacements after
            IR-2023-007 (£41k), additional crane mobilisation (£38k) and legal fees for the Osprey EPC
            negotiation (£52k)."""),
            P("""Capital: Project Falcon spent £1,352,900 in FY2023 against the revised budget of £1,420,000
            (original budget £1,250,000; Board-approved increase of £170,000 on 18 April 2023). The CM-T04
            gearbox exchange cost £359,000 and was charged to the major component reserve (budget £400,000).
            The CM-T06 bearing replacement (£14,500) was charged to operating costs. The Osprey feasibility line
            spent £108,000 of its £120,000."""),
            P("""Insurance: the BR-T03 lightning claim settled at £13,400 (repair £38,400 less £25,000 excess).
            No insurance claim was possible for CM-T04 because gradual deterioration is excluded."""),
            H2("Outlook"),
            P("""FY2024 opens with £3.1m cash. The Osprey investment decision is scheduled for the Board on
            12 March 2024."""),
        ]],
    ),
]

HR_POLICIES = [
    Doc(
        "HR/Policies/HS-POL-001-Health-and-Safety-Policy.pdf",
        D(2022, 3, 1),
        "HS-POL-001 Health and Safety Policy",
        MD,
        subject="Company health and safety policy statement and arrangements",
        keywords="health and safety; policy; responsibilities; arrangements",
        pages=[
            [
                H1("HS-POL-001 Health and Safety Policy"),
                META([
                    ("Document", "HS-POL-001, revision 5"),
                    ("Signed", f"{MD}, Managing Director"),
                    ("Owner", f"{HSE}, Head of Health, Safety & Environment"),
                    ("Effective", "1 March 2022; review by 1 March 2025"),
                ]),
                H2("1. Statement of intent"),
                P("""Northwind Renewables is committed to the health, safety and welfare of its employees,
                contractors, visitors and neighbours at all of its sites. We will provide safe places of work,
                safe equipment and safe systems of work, and the information, instruction, training and
                supervision people need. Nobody is expected to carry out a task they believe is unsafe, and
                anyone may stop work without fear of blame."""),
                P("""We will set annual safety objectives, consult our workforce through the Safety Committee,
                investigate every incident and near miss, and learn from them. This policy is reviewed at least
                every three years, and after any serious incident."""),
            ],
            [
                H2("2. Responsibilities"),
                UL([
                    "The Managing Director has overall responsibility for health and safety and reports on it to the Board at every meeting.",
                    "The Head of HSE advises the company, owns the safety management system, and investigates serious incidents.",
                    "Site managers are responsible for safety at their sites, including contractors' work.",
                    "Every employee must follow the policies and procedures, use the equipment provided and report hazards, incidents and near misses.",
                ]),
                H2("3. Arrangements"),
                P("""Specific risks are controlled by the following topic policies, each implemented by
                operating procedures:"""),
                TABLE([
                    ["Risk", "Governing policy", "Main procedures"],
                    ["Working at height (towers, nacelles, roofs)", "HS-POL-004 Working at Height Policy", "OP-PRO-112 Tower Climb and Rescue"],
                    ["Electrical work (LV, HV, DC, batteries)", "HS-POL-005 Electrical Safety Policy", "OP-PRO-118 Isolation and Lockout; HV Safety Rules"],
                    ["Lone and remote working, driving on site", "HS-POL-007 Lone Working Policy", "Site check-in procedure"],
                    ["Incidents and near misses", "HS-POL-001 (this policy), section 4", "Incident reporting (intranet form)"],
                    ["Contractors", "HS-POL-001 (this policy)", "Contractor induction, permit-to-work"],
                ]),
            ],
            [
                H2("4. Incident reporting and investigation"),
                P("""All incidents, near misses and dangerous occurrences must be reported to the site manager
                immediately and logged on the intranet incident form within 24 hours. Each is given a reference
                (IR-year-number) and classified. Major equipment failures and high-potential events are
                investigated by the Head of HSE with a root-cause analysis; reports are issued within 28 days
                and summarised for the Board. Reportable injuries and dangerous occurrences are notified to the
                enforcing authority within the statutory time limits."""),
                H2("5. Monitoring"),
                UL([
                    "Safety statistics (lost-time injuries, first-aid cases, near misses) reported monthly.",
                    "Site safety inspections monthly; HSE audits of each site annually.",
                    "Progress on incident corrective actions tracked in the incident register.",
                ]),
                P(f"""Signed: {MD}, Managing Director, 1 March 2022."""),
            ],
        ],
    ),
    Doc(
        "HR/Policies/HS-POL-004-Working-at-Height-Policy.pdf",
        D(2022, 6, 1),
        "HS-POL-004 Working at Height Policy",
        HSE,
        subject="Policy governing all work at height",
        keywords="working at height; fall protection; GWO; rescue; policy",
        pages=[
            [
                H1("HS-POL-004 Working at Height Policy"),
                META([
                    ("Document", "HS-POL-004, revision 3"),
                    ("Owner", f"{HSE}, Head of Health, Safety & Environment"),
                    ("Approved", f"{MD}, Managing Director"),
                    ("Effective", "1 June 2022"),
                    ("Parent policy", "HS-POL-001 Health and Safety Policy"),
                ]),
                H2("1. Purpose"),
                P("""This policy governs all work at height carried out by or for Northwind Renewables. Work at
                height means work in any place where, if precautions were not taken, a person could fall a
                distance liable to cause injury, including climbing wind turbine towers, work in nacelles and
                hubs, on the roofs of substations and inverter stations, on ladders, and on battery containers.
                It reflects the Work at Height Regulations 2005 and the Global Wind Organisation (GWO)
                standards."""),
                H2("2. Scope"),
                P("""The policy applies to employees, contractors and visitors at all Northwind sites. Contractors
                may use their own procedures only if they are at least as stringent as this policy and have been
                accepted by the Head of HSE. The policy is implemented through OP-PRO-112 Tower Climb and Rescue
                Procedure and the site rules."""),
            ],
            [
                H2("3. Requirements"),
                OL([
                    "Avoid work at height where reasonably practicable (e.g. drone inspections instead of rope access, ground-level assembly).",
                    "Where it cannot be avoided, use collective protection (guard rails, platforms) before personal fall protection.",
                    "Every person climbing a wind turbine must hold a valid GWO Basic Safety Training Working at Height certificate (renewed every 24 months) and a site induction.",
                    "At least two competent people are present for every climb (two-person rule); lone climbing is never permitted.",
                    "A written rescue plan and rescue equipment must be in place before work starts; suspended persons must be recovered within 10 minutes.",
                    "Weather limits: no climbing above 18 m/s mean wind speed, no work outside the nacelle or in the hub above 12 m/s, and no climbing within 30 minutes of lightning within 10 km.",
                    "Tools and materials must be secured against falling; an exclusion zone applies at the base of any turbine with people aloft.",
                ]),
                H2("4. Equipment"),
                P("""All fall-protection equipment (harnesses, lanyards, fall arresters, anchor points, rescue
                kits) must be inspected by the user before each use and thoroughly examined by a competent person
                at least every six months. Equipment that is damaged, has arrested a fall, or is past its
                examination date must be quarantined immediately and reported as an incident. Anchor points and
                fixed ladders in turbines are inspected annually by the turbine OEM."""),
            ],
            [
                H2("5. Roles"),
                TABLE([
                    ["Role", "Responsibility"],
                    ["Head of HSE", "Owns this policy, approves procedures and contractor methods, monitors compliance"],
                    ["Site managers", "Ensure climbers are trained and fit, equipment is examined, rescue drills are held every 6 months"],
                    ["Climbers", "Pre-use checks, follow OP-PRO-112, stop work when conditions are unsafe"],
                    ["HR Manager", "Maintains the training matrix and certificate expiry reminders"],
                ]),
                H2("6. Monitoring and review"),
                P("""Working-at-height incidents and near misses are reported to the Board. This policy is reviewed
                every two years or after any fall, fall-arrest event or high-potential near miss. Revision 3
                (June 2022) follows the dropped-object near miss IR-2022-003."""),
                H2("7. Related documents"),
                UL([
                    "HS-POL-001 Health and Safety Policy",
                    "OP-PRO-112 Tower Climb and Rescue Procedure",
                    "HS-POL-007 Lone Working Policy",
                    "Training matrix (HR/Training)",
                ]),
            ],
        ],
    ),
    Doc(
        "HR/Policies/HS-POL-005-Electrical-Safety-Policy.docx",
        D(2022, 9, 5),
        "HS-POL-005 Electrical Safety Policy",
        HSE,
        subject="Policy governing electrical work",
        keywords="electrical safety; HV; isolation; arc flash; battery; policy",
        pages=[[
            H1("HS-POL-005 Electrical Safety Policy"),
            META([
                ("Document", "HS-POL-005, revision 2"),
                ("Owner", HSE),
                ("Approved", MD),
                ("Effective", "5 September 2022"),
            ]),
            H2("1. Purpose and scope"),
            P("""This policy governs all work on or near electrical systems at Northwind sites: low-voltage
            (LV) and high-voltage (HV, above 1,000 V AC) systems, DC systems in solar arrays, inverters and
            turbine converters, and battery systems. It reflects the Electricity at Work Regulations 1989."""),
            H2("2. Principles"),
            OL([
                "Work is done dead wherever possible. Live work requires written justification and approval by the Head of Engineering.",
                "All energy sources are isolated, locked, and proven dead before work starts (OP-PRO-118 Isolation and Lockout).",
                "HV switching and work on HV systems is controlled by the HV Safety Rules and a permit-to-work issued by an Authorised Person.",
                "Arc-rated PPE appropriate to the calculated incident energy is worn for switching and testing.",
                "Only persons assessed as competent and appointed in writing may carry out electrical work.",
            ]),
            H2("3. Authorisation levels"),
            TABLE([
                ["Level", "May", "Appointed by"],
                ["Competent Person (LV)", "Work on isolated LV equipment", "Site manager"],
                ["Authorised Person (HV)", "HV switching, issue permits-to-work", "Head of Engineering"],
                ["Senior Authorised Person", "Approve switching programmes, audit AP", "Managing Director"],
            ]),
            H2("4. Batteries"),
            P("""Battery systems cannot be fully de-energised. Work inside battery containers requires a specific
            method statement, insulated tools, and the battery emergency response plan. This section was added in
            revision 2 in anticipation of Project Osprey."""),
            H2("5. Review"),
            P("""Revision 2 also responds to the near miss at inverter HF-INV-03 (IR-2022-011), which showed that
            DC sources were missing from isolation certificates."""),
        ]],
    ),
    Doc(
        "HR/Policies/HS-POL-007-Lone-Working-Policy.md",
        D(2023, 5, 2),
        "HS-POL-007 Lone Working Policy",
        HSE,
        pages=[[
            H1("HS-POL-007 Lone Working Policy"),
            META([
                ("Document", "HS-POL-007, revision 2"),
                ("Owner", HSE),
                ("Effective", "2 May 2023"),
            ]),
            H2("Purpose"),
            P("""Many Northwind staff work alone or in remote places: site managers on inspections, solar
            technicians at Hollins Flats, and drivers on wind farm access tracks. This policy sets the minimum
            controls for lone working. It does not permit any lone work at height: climbing always requires two
            people under HS-POL-004 Working at Height Policy."""),
            H2("Permitted lone work"),
            UL([
                "Visual inspections at ground level, driving between turbines, office and site-office work.",
                "Routine solar park inspections and vegetation checks.",
                "NOT permitted alone: climbing, confined spaces, HV switching, work inside battery containers.",
            ]),
            H2("Controls"),
            OL([
                "Check in with the control room at the start of lone work and at least every 2 hours.",
                "Carry a charged mobile phone or satellite messenger; Carrow Moor has poor mobile coverage, so use the site radio.",
                "If a check-in is missed by 30 minutes, the control room phones the person, then sends the nearest colleague.",
                "Site vehicles carry a first-aid kit, torch, blanket and water.",
            ]),
            H2("Review"),
            P("""Reviewed in May 2023. A further review of driving on site is planned after the vehicle collision
            on the Carrow Moor access track (IR-2023-021)."""),
        ]],
    ),
    Doc(
        "HR/Policies/HR-POL-012-Annual-Leave-Policy.docx",
        D(2024, 1, 8),
        "HR-POL-012 Annual Leave Policy",
        HR,
        subject="Annual leave entitlement and booking",
        keywords="HR; annual leave; holiday; policy",
        pages=[[
            H1("HR-POL-012 Annual Leave Policy"),
            META([
                ("Document", "HR-POL-012, revision 4"),
                ("Owner", f"{HR}, HR Manager"),
                ("Effective", "1 January 2024"),
            ]),
            H2("Entitlement"),
            P("""Full-time employees are entitled to 27 days of annual leave plus public holidays, rising to
            29 days after five years of service. Part-time entitlement is pro rata. The leave year runs from
            1 January to 31 December, the same as the financial year."""),
            H2("Booking leave"),
            UL([
                "Book leave through the HR portal at least two weeks in advance for periods of more than three days.",
                "Site technicians must agree leave with their site manager so that the two-person rule for climbing can always be met.",
                "No more than one of the Carrow Moor technicians may be on leave at the same time between October and March.",
            ]),
            H2("Carry-over"),
            P("""Up to 5 days may be carried into the next leave year and must be used by 31 March. Additional
            carry-over is allowed only for sickness or family leave, or with Managing Director approval."""),
            H2("On-call and standby"),
            P("""Staff on the out-of-hours standby rota receive a standby allowance of £35 per night and £60 per
            weekend day, and time off in lieu when called out for more than 3 hours."""),
        ]],
    ),
]

LEGAL_DOCS = [
    Doc(
        "Legal/Contracts/NWR-C-2023-014-Veridian-CMS-Supply-Agreement.pdf",
        D(2023, 3, 3),
        "Supply Agreement NWR-C-2023-014 - Condition Monitoring System (Project Falcon)",
        LEGAL,
        subject="Contract between Northwind Renewables Ltd and Veridian Sensing Ltd",
        keywords="contract; Project Falcon; Veridian; CMS; supply agreement; warranty",
        pages=[
            [
                H1("Supply and Services Agreement NWR-C-2023-014"),
                META([
                    ("Parties", f"Northwind Renewables Ltd, {HQ} (Customer) and {CMS_VENDOR} (Supplier)"),
                    ("Project", "Project Falcon - drivetrain condition monitoring for 20 wind turbines"),
                    ("Date", "3 March 2023"),
                    ("Contract value", "£842,000 (fixed price, excluding VAT)"),
                ]),
                H2("1. Definitions"),
                P("""In this Agreement: "System" means the condition-monitoring hardware, software and
                historian described in Schedule 2 (Technical Specification NWR-ENG-SPEC-031 rev B); "Sites" means
                Brackenridge Wind Farm and Carrow Moor Wind Farm; "Go-Live" means the date on which the System
                has passed site acceptance tests on all 20 turbines; "Fleet Acceptance" has the meaning given in
                Schedule 2, section 8."""),
                H2("2. Scope of supply"),
                P("""The Supplier shall design, supply, install, commission and support the System on 20 wind
                turbines and provide training and 12 months of remote diagnostic services from Go-Live. The
                online oil particle counter option (requirement R8) is priced in Schedule 4 and may be instructed
                by the Customer as a variation."""),
            ],
            [
                H2("3. Price and payment"),
                TABLE([
                    ["Milestone", "% of price", "£"],
                    ["Contract signature", "10%", "84,200"],
                    ["Delivery of hardware for first site", "30%", "252,600"],
                    ["Site acceptance, first site", "20%", "168,400"],
                    ["Site acceptance, second site", "20%", "168,400"],
                    ["Fleet Acceptance", "15%", "126,300"],
                    ["End of 12-month support period", "5%", "42,100"],
                ]),
                P("""Invoices are payable within 30 days. Variations are valued at the Schedule 4 rates and
                require a written variation order signed by the Customer's Head of Engineering."""),
                H2("4. Programme and delay"),
                P("""Go-Live shall occur by 31 October 2023. If Go-Live is delayed for reasons attributable to the
                Supplier, liquidated damages of 0.5% of the contract price per week apply, capped at 10% of the
                contract price. Delay caused by weather exceeding the limits in the Customer's Working at Height
                Policy (HS-POL-004) entitles the Supplier to an extension of time but not to additional cost."""),
                H2("5. Site rules"),
                P("""The Supplier's personnel shall comply with the Customer's site rules, OP-PRO-112 Tower Climb
                and Rescue Procedure and OP-PRO-118 Isolation and Lockout, and shall hold valid GWO certificates."""),
            ],
            [
                H2("6. Warranty"),
                P("""The Supplier warrants the System for 36 months from Go-Live. Defective sensors and data
                acquisition units shall be replaced within 10 working days. The Supplier guarantees data
                availability of at least 98% per quarter during the warranty period; for each full percentage
                point below 98% a service credit of £5,000 applies."""),
                H2("7. Liability and insurance"),
                P("""Total liability of either party is capped at 100% of the contract price, except for death or
                personal injury, fraud and breach of confidentiality. The Supplier shall carry public liability
                insurance of £10 million and professional indemnity insurance of £2 million."""),
                H2("8. Data"),
                P("""All data collected by the System belongs to the Customer. The Supplier may use anonymised data
                to improve its diagnostic algorithms."""),
                H2("9. Signatures"),
                P(f"""Signed for Northwind Renewables Ltd: {MD}, Managing Director, 3 March 2023. Signed for
                Veridian Sensing Ltd: Mark Henshaw, Commercial Director, 3 March 2023."""),
                P("""Note added 12 May 2023: Variation Order 1 (online oil particle counters and water sensors on
                20 gearboxes, £128,000) instructed following Board approval of change request CR-003 on 18 April
                2023. Revised contract value £970,000."""),
            ],
        ],
    ),
    Doc(
        "Legal/Contracts/NWR-C-2024-003-Halden-BESS-EPC-Contract.docx",
        D(2024, 4, 2),
        "EPC Contract NWR-C-2024-003 - Hollins Flats BESS (Project Osprey)",
        LEGAL,
        subject="Engineering, procurement and construction contract with Halden Energy Systems Ltd",
        keywords="contract; EPC; Project Osprey; BESS; Halden; liquidated damages",
        pages=[[
            H1("EPC Contract NWR-C-2024-003 - Key Terms Summary"),
            META([
                ("Employer", "Northwind Renewables Ltd"),
                ("Contractor", BESS_EPC),
                ("Project", "Project Osprey - 5 MW / 10 MWh battery energy storage system at Hollins Flats Solar Park"),
                ("Date signed", "2 April 2024"),
                ("Contract price", "£3,950,000, fixed lump sum, excluding VAT"),
                ("Prepared by", f"{LEGAL}, Company Secretary & Legal Counsel"),
            ]),
            H2("Scope"),
            P("""Turnkey design, procurement, construction, testing and commissioning of the BESS, including
            civils, four battery containers, two PCS skids, the 33 kV connection to Northwind's substation
            bay, the export limitation scheme, fire detection and suppression, and two years of operation and
            maintenance support."""),
            H2("Key dates"),
            TABLE([
                ["Milestone", "Date"],
                ["Start on site", "13 May 2024"],
                ["Mechanical completion", "9 Aug 2024"],
                ["Taking over (energisation for export)", "30 Sep 2024"],
                ["Performance test completion", "31 Oct 2024"],
            ]),
            H2("Clause 9 - Delay damages"),
            P("""If Taking Over is delayed beyond 30 September 2024 for reasons not attributable to the
            Employer, the Contractor pays delay damages of £4,500 per day, capped at 10% of the contract price
            (£395,000). Delay damages are the Employer's sole remedy for delay."""),
            H2("Clause 12 - Performance guarantees"),
            UL([
                "Usable energy at point of connection of at least 10.0 MWh at beginning of life; damages of £25,000 per 0.1 MWh shortfall.",
                "Round-trip efficiency of at least 86%; damages of £40,000 per percentage point shortfall.",
                "Capacity of at least 70% of beginning-of-life energy after 10 years (manufacturer warranty, back-to-back).",
            ]),
            H2("Other terms"),
            UL([
                "Retention 5% released on the performance test certificate; parent company guarantee from Halden Group AS.",
                "Contractor is principal designer and principal contractor under CDM 2015.",
                "Governing law: England and Wales. Disputes: adjudication, then arbitration.",
            ]),
        ]],
    ),
    Doc(
        "Legal/Contracts/Aerion-OM-Service-Agreement-Summary-2022.txt",
        D(2022, 2, 1),
        "Aerion Wind Services O&M Service Agreement - Summary",
        LEGAL,
        encoding="cp1252",
        newline="\r\n",
        pages=[[
            H1("Aerion Wind Services - O&M Service Agreement (renewal 2022) - Summary"),
            META([
                ("Contract ref", "NWR-C-2022-002"),
                ("Counterparty", OEM),
                ("Term", "1 February 2022 – 31 January 2027 (5 years)"),
                ("Sites", "Brackenridge (12 x AW-2.3) and Carrow Moor (8 x AW-3.0)"),
                ("Annual fee", "£1,590,000 in contract year 1, indexed to CPI each February"),
                ("Prepared by", f"{LEGAL} for the Executive team"),
            ]),
            H2("Services included"),
            UL([
                "Scheduled maintenance: two services per turbine per year (semi-annual), using Aerion's service checklists.",
                "Unscheduled maintenance for faults and minor components (up to £15,000 parts value per event).",
                "Remote monitoring of turbine SCADA alarms 24/7 and remote resets.",
                "Annual inspection of ladders, anchor points and service lifts.",
            ]),
            H2("Exclusions (Northwind's cost)"),
            UL([
                "Major components: gearbox, main bearing, generator, blades, transformer – including cranes.",
                "Consumables outside the checklist scope, and oil analysis (Northwind uses Lubricheck Laboratories).",
                "Damage from lightning, force majeure or gradual deterioration caused by Northwind instructions.",
            ]),
            H2("Availability guarantee"),
            P("""Aerion guarantees 97.0% time-based availability per site per year, excluding major-component
            downtime. Liquidated damages: £18,000 per 0.1% shortfall, capped at 15% of the annual fee.
            Bonus: 50% of the value of generation above 98.0% availability."""),
            H2("Notes for the 2022 renewal"),
            P("""Northwind agreed to Aerion's proposal to extend gearbox oil sampling from 6-monthly to
            12-monthly in 2021 (saving about £9,000 per year); oil sampling is a Northwind responsibility
            under the new agreement. Spare-parts stock at site (breathers, filters) is held by Aerion –
            minimum stock levels are not specified in the contract and should be added at the next review."""),
        ]],
    ),
    Doc(
        "Legal/Contracts/Carrow-Moor-Land-Lease-Summary.md",
        D(2022, 7, 19),
        "Carrow Moor land lease - summary of key terms",
        LEGAL,
        pages=[[
            H1("Carrow Moor Wind Farm - Land Lease Summary"),
            META([
                ("Landlord", "Ardmore Estates"),
                ("Tenant", "Northwind Renewables Ltd"),
                ("Lease dated", "1 April 2015; term 25 years plus decommissioning period of 2 years"),
                ("Prepared by", LEGAL),
                ("Date of summary", "19 July 2022"),
            ]),
            H2("Rent"),
            P("""Base rent of £4,200 per MW per year (£100,800 for 24 MW), indexed to RPI, or 1.75% of gross
            revenue from the site if higher. Rent is paid quarterly in advance. 2022 rent: £121,600 (the
            revenue-based rent applied because of high power prices)."""),
            H2("Access track"),
            P("""The 3.2 km access track from the public road is shared with the landlord's farm traffic.
            Routine maintenance (grading, drainage, vegetation at passing places) is shared 50/50 between the
            parties. Damage caused by heavy loads such as cranes for major-component exchanges is the tenant's
            responsibility, and the tenant must give 14 days' notice of abnormal loads."""),
            H2("Other key terms"),
            UL([
                "Tenant may replace turbines with equivalent models; repowering to larger turbines needs landlord consent.",
                "Livestock: tenant must keep gates closed and fence transformer kiosks.",
                "Decommissioning bond of £480,000 held in escrow, reviewed every 5 years.",
                "Break clause for the tenant at year 20 (2035) on 12 months' notice.",
            ]),
            H2("Recent matters"),
            P("""The landlord has raised the condition of the passing places. A joint track inspection is planned
            for autumn 2022."""),
        ]],
    ),
]

BOARD_MINUTES = [
    Doc(
        f"{BOARD}/2022/Board-Minutes-2022-12-06.docx",
        D(2022, 12, 6),
        "Minutes of the Board of Directors, 6 December 2022",
        LEGAL,
        subject="Board minutes",
        keywords="board; minutes; FY2023 budget; Project Falcon; safety",
        pages=[[
            H1("Northwind Renewables Ltd - Minutes of the Board Meeting, 6 December 2022"),
            META([
                ("Present", f"{CHAIR} (Chair), {MD}, {FD}, {NED}"),
                ("In attendance", f"{ENG} (items 3-4), {HSE} (item 2), {LEGAL} (Secretary)"),
                ("Location", "Kestrel House, Port Ellery"),
            ]),
            H2("2022/12-1 Minutes and matters arising"),
            P("""The minutes of 13 September 2022 were approved. The Heron blade repair project closed under
            budget (£296,750 against £310,000)."""),
            H2("2022/12-2 Health and safety"),
            P("""Catriona Bell reported no lost-time injuries in the year to date. Notable events: the
            dropped-object near miss at BR-T07 (IR-2022-003), the arc-flash near miss at Hollins Flats
            (IR-2022-011) and a first-aid injury during a ladder climb at CM-T06 (IR-2022-014). The Working at
            Height Policy HS-POL-004 and Electrical Safety Policy HS-POL-005 were revised in 2022."""),
            H2("2022/12-3 Project Falcon"),
            P("""Tomasz Nowak presented the case for drivetrain condition monitoring on all 20 wind turbines. The
            Board supported the project and asked that the Carrow Moor turbines, which have had more gearbox
            temperature alarms, be considered for early installation."""),
            H2("2022/12-4 FY2023 budget"),
            P("""Rajesh Iyer presented the FY2023 budget: revenue £13,616,000, operating costs £8,252,000 and a
            capital budget of £2,175,000, including £1,250,000 for Project Falcon, a £400,000 major component
            reserve and £120,000 for Project Osprey feasibility. RESOLVED: the FY2023 budget was approved."""),
            H2("2022/12-5 Any other business"),
            P("""Margaret Doyle asked for the gearbox oil sampling interval, extended to 12 months in 2021, to be
            reviewed against the failure history. Action: Tomasz Nowak, report to the April 2023 meeting."""),
            P("Next meeting: 18 April 2023."),
        ]],
    ),
    Doc(
        f"{BOARD}/2023/Board-Minutes-2023-04-18.pdf",
        D(2023, 4, 18),
        "Minutes of the Board of Directors, 18 April 2023",
        LEGAL,
        subject="Board minutes",
        keywords="board; minutes; gearbox failure; Project Falcon; budget increase; CR-003",
        pages=[
            [
                H1("Minutes of the Board Meeting, 18 April 2023"),
                META([
                    ("Present", f"{CHAIR} (Chair), {MD}, {FD}, {NED}"),
                    ("In attendance", f"{ENG}, {HSE}, {FALCON_PM} (item 4), {LEGAL} (Secretary)"),
                    ("Location", "Kestrel House, Port Ellery"),
                ]),
                H2("2023/04-1 Minutes and matters arising"),
                P("""The minutes of 6 December 2022 were approved. On the action from 2022/12-5 (oil sampling
                interval), see item 3."""),
                H2("2023/04-2 Health and safety"),
                P("""No injuries in the period. Catriona Bell reported that the Lone Working Policy HS-POL-007 is
                being revised and will be issued in May."""),
                H2("2023/04-3 CM-T04 gearbox failure (IR-2023-007)"),
                P("""Tomasz Nowak presented incident report IR-2023-007. The gearbox on turbine CM-T04 at Carrow
                Moor failed on 14 March 2023. The root cause was water contamination of the gearbox oil through a
                saturated desiccant breather that had not been replaced at the September 2022 service; the
                extended 12-month oil sampling interval and the lack of condition monitoring meant the problem
                was not detected. The gearbox will be exchanged on 24 April. Direct cost is £359,000, to be
                charged to the major component reserve, plus about £82,000 of lost revenue."""),
                P("""The Board noted that the question raised in December 2022 about the sampling interval had
                proved justified. Sampling has been restored to 6-monthly (OP-PRO-203 rev C) and breathers have
                been replaced across both wind farms."""),
            ],
            [
                H2("2023/04-4 Project Falcon change request CR-003"),
                P("""Aisha Okafor presented change request CR-003: add online oil particle counters and water
                sensors to all 20 gearboxes (£128,000 Veridian variation plus £42,000 installation and
                integration), and install Carrow Moor first. The project budget would increase from £1,250,000 to
                £1,420,000. Rajesh Iyer confirmed that the increase can be funded from cash and that the
                FY2023 capital contingency (£95,000) remains available for other lines."""),
                P("""RESOLVED: the Board approved CR-003 and a revised Project Falcon budget for FY2023 of
                £1,420,000."""),
                H2("2023/04-5 Finance"),
                P("""Q1 revenue was £3.92m, 4% above budget due to high power prices, despite the CM-T04 outage.
                The full-year forecast remains in line with budget."""),
                H2("2023/04-6 Project Osprey"),
                P("""Priya Sandhu's feasibility study for a 5 MW / 10 MWh battery at Hollins Flats is on track.
                A grid connection application has been submitted. Investment decision expected in Q1 2024."""),
                H2("2023/04-7 Any other business"),
                P("""None. Next meeting: 11 July 2023."""),
            ],
        ],
    ),
    Doc(
        f"{BOARD}/2023/Board-Minutes-2023-10-10.docx",
        D(2023, 10, 10),
        "Minutes of the Board of Directors, 10 October 2023",
        LEGAL,
        subject="Board minutes",
        keywords="board; minutes; Project Falcon progress; working at height; Osprey",
        pages=[[
            H1("Minutes of the Board Meeting, 10 October 2023"),
            META([
                ("Present", f"{CHAIR} (Chair), {MD}, {FD}, {NED}"),
                ("In attendance", f"{ENG}, {HSE}, {LEGAL} (Secretary)"),
            ]),
            H2("2023/10-1 Minutes and matters arising"),
            P("The minutes of 11 July 2023 were approved."),
            H2("2023/10-2 Health and safety"),
            P("""Catriona Bell reported a damaged fall-arrest lanyard found in the issue rack at Brackenridge
            (IR-2023-012), the second working-at-height equipment finding in 12 months. Quarantine bins and
            better lighting have been installed and a toolbox talk delivered. The lightning strike on BR-T03
            (IR-2023-019) caused no injuries. The Board asked for an independent audit of height-safety
            equipment management in 2024 against HS-POL-004."""),
            H2("2023/10-3 Project Falcon"),
            P("""The Board received the Q3 progress report. Carrow Moor is complete and 9 of 12 Brackenridge
            turbines are installed. Spend to date is £1,102,300 against the revised budget of £1,420,000, with
            a forecast outturn of £1,384,000. The CMS detected a bearing defect on CM-T06 that was repaired
            up-tower for £14,500. Go-live has moved to 6 November 2023 because of weather."""),
            H2("2023/10-4 Finance"),
            P("""Year-to-date revenue is £10.1m, 2% above budget. The major component reserve has £41,000
            remaining after the CM-T04 gearbox exchange."""),
            H2("2023/10-5 Project Osprey"),
            P("""The grid connection offer is expected in December. The Board asked for a full investment case,
            including fire safety design and insurance, for the March 2024 meeting."""),
            H2("2023/10-6 FY2024 budget timetable"),
            P("""The draft FY2024 budget will be presented on 12 December 2023."""),
        ]],
    ),
    Doc(
        f"{BOARD}/2024/Board-Minutes-2024-03-12.pdf",
        D(2024, 3, 12),
        "Minutes of the Board of Directors, 12 March 2024",
        LEGAL,
        subject="Board minutes",
        keywords="board; minutes; Project Osprey investment approval; Project Falcon closeout",
        pages=[
            [
                H1("Minutes of the Board Meeting, 12 March 2024"),
                META([
                    ("Present", f"{CHAIR} (Chair), {MD}, {FD}, {NED}"),
                    ("In attendance", f"{ENG}, {HSE}, {OSPREY_PM} (item 4), {LEGAL} (Secretary)"),
                ]),
                H2("2024/03-1 Minutes and matters arising"),
                P("""The minutes of 12 December 2023 were approved. The FY2024 budget was approved at that meeting
                with the Osprey line subject to today's investment decision."""),
                H2("2024/03-2 Health and safety"),
                P("""No injuries in the period. The independent audit of height-safety equipment (requested
                October 2023) found good compliance with HS-POL-004, with two minor findings on record keeping."""),
                H2("2024/03-3 Project Falcon closeout"),
                P("""Tomasz Nowak presented the closeout report. All 20 turbines are monitored; final cost
                £1,386,400 against the revised budget of £1,420,000. The CMS has found two defects early
                (CM-T06 and BR-T09), with avoided costs estimated above £400,000. The Board thanked Aisha Okafor
                and the team and closed the project. A phase 2 study of yaw and pitch monitoring (£30,000) is in
                the FY2024 budget."""),
            ],
            [
                H2("2024/03-4 Project Osprey investment decision"),
                P("""Priya Sandhu presented the investment case and design basis for a 5 MW / 10 MWh LFP battery
                at Hollins Flats. Capital cost £4,600,000 including 5% contingency; expected revenue £690,000 per
                year; simple payback 6.7 years. The fire and rescue service has been consulted and the design
                follows NFPA 855. The preferred EPC contractor is Halden Energy Systems at a fixed price of
                £3,950,000. Financing: green loan of £2,760,000 and £1,840,000 from cash."""),
                P("""Margaret Doyle asked about thermal management; Priya explained the HVAC design keeps cells
                between 15 and 35 °C and the BMS de-rates above 38 °C. RESOLVED: the Board approved Project
                Osprey with a capital budget of £4,600,000 and authorised the Managing Director to sign the EPC
                contract."""),
                H2("2024/03-5 Finance"),
                P("""FY2023 results (unaudited): revenue £13.9m, EBITDA £5.48m. Cash £3.1m at year end."""),
                H2("2024/03-6 Any other business"),
                P("""The Carrow Moor land lease rent review with Ardmore Estates is due in April 2025. Next
                meeting: 11 June 2024."""),
            ],
        ],
    ),
    Doc(
        f"{BOARD}/2024/Board-Minutes-2024-09-17.md",
        D(2024, 9, 17),
        "Minutes of the Board of Directors, 17 September 2024",
        LEGAL,
        pages=[[
            H1("Minutes of the Board Meeting, 17 September 2024"),
            META([
                ("Present", f"{CHAIR} (Chair), {MD}, {FD}, {NED}"),
                ("In attendance", f"{ENG}, {HSE}, {OSPREY_PM} (item 3), {LEGAL} (Secretary)"),
            ]),
            H2("2024/09-1 Minutes and matters arising"),
            P("The minutes of 11 June 2024 were approved."),
            H2("2024/09-2 Health and safety"),
            P("""No injuries. Incident IR-2024-002: during Osprey commissioning, battery container C2 overheated
            to a maximum cell temperature of 41 °C when its HVAC unit tripped because of a factory wiring fault.
            The battery management system de-rated the container as designed and there was no thermal runaway.
            The Board asked for assurance that all four containers' HVAC systems have been re-tested."""),
            H2("2024/09-3 Project Osprey"),
            P("""Priya Sandhu reported that civil works, delivery and container commissioning are complete. The
            HVAC fault caused a two-week delay and energisation is now forecast for 14 October 2024 instead of
            30 September. The grid offer allows energisation until 31 October 2024. Delay damages of £4,500 per
            day apply under clause 9 of the EPC contract from 1 October. Spend to date £3,710,000 against the
            budget of £4,600,000; forecast outturn £4,520,000."""),
            H2("2024/09-4 Finance"),
            P("""Half-year revenue £6.6m, 3% below budget because of low wind in Q2. The BR-T09 planned gearbox
            repair was completed in July for £148,000 against a budget of £160,000."""),
            H2("2024/09-5 Any other business"),
            P("""The Falcon phase 2 study (yaw and pitch monitoring) will report in January 2025. Next meeting:
            10 December 2024."""),
        ]],
    ),
]

DOCS = FINANCE + HR_POLICIES + LEGAL_DOCS + BOARD_MINUTES
